// The connectors replies may go to: the Bot Framework's hosts over https and the one configured origin, nothing else.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectorUrl, serviceUrlProblem } from '../services/service-url.ts';

test('only https Bot Framework hosts and service_url_allow pass', () => {
  for (const ok of ['https://smba.trafficmanager.net/amer/', 'https://smba.trafficmanager.net/teams/', 'https://europe.webchat.botframework.com/'])
    assert.equal(serviceUrlProblem(ok, undefined), undefined, ok);
  assert.equal(serviceUrlProblem('http://127.0.0.1:4000/teams/', 'http://127.0.0.1:4000'), undefined, 'the configured origin');
  for (const bad of [
    'http://smba.trafficmanager.net/amer/',
    'https://trafficmanager.net.evil.com/',
    'https://evilbotframework.com/',
    'https://user:pw@smba.trafficmanager.net/',
    'http://169.254.169.254/',
    'http://127.0.0.1:4001/',
    'not a url',
  ])
    assert.ok(serviceUrlProblem(bad, 'http://127.0.0.1:4000'), bad);
});

test("a connector path keeps the serviceUrl's own path", () => {
  assert.equal(
    connectorUrl('https://smba.trafficmanager.net/amer', 'v3/conversations/a%3A1/activities'),
    'https://smba.trafficmanager.net/amer/v3/conversations/a%3A1/activities',
  );
  assert.equal(connectorUrl('https://smba.trafficmanager.net/amer/', 'v3/x'), 'https://smba.trafficmanager.net/amer/v3/x');
});
