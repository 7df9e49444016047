// The connectors replies may go to: https on the Bot Framework's service URL hosts (service_url_hosts, by default the
// documented ones, the US government clouds included) and the one configured origin, nothing else.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectorUrl, serviceUrlPolicy, serviceUrlProblem } from '../services/service-url.ts';

const defaults = serviceUrlPolicy({ service_url_allow: 'http://127.0.0.1:4000' });

test('the documented Bot Framework hosts pass by default, the government clouds too, and the configured origin', () => {
  for (const ok of [
    'https://smba.trafficmanager.net/amer/',
    'https://smba.trafficmanager.net/teams/',
    'https://europe.webchat.botframework.com/',
    'https://smba.infra.gcc.teams.microsoft.com/teams',
    'https://smba.infra.gov.teams.microsoft.us/teams',
    'https://SMBA.infra.dod.teams.microsoft.us/teams/',
  ])
    assert.equal(serviceUrlProblem(ok, defaults), undefined, ok);
  assert.equal(serviceUrlProblem('http://127.0.0.1:4000/teams/', defaults), undefined, 'the configured origin');
});

test('lookalikes and other hosts are refused, other trafficmanager.net names included', () => {
  for (const bad of [
    'https://evil.trafficmanager.net/amer/',
    'https://trafficmanager.net/',
    'https://smba.trafficmanager.net.evil.com/',
    'https://trafficmanager.net.evil.com/',
    'https://evilbotframework.com/',
    'https://botframework.com.evil.com/',
    'https://smba.infra.gov.teams.microsoft.us.evil.com/teams',
    'https://xsmba.infra.dod.teams.microsoft.us/teams',
    'https://smba.infra.gcc.teams.microsoft.com.evil.us/',
    'https://smba.trafficmanager.net./amer/',
    'http://smba.trafficmanager.net/amer/',
    'http://smba.infra.gov.teams.microsoft.us/teams',
    'https://user:pw@smba.trafficmanager.net/',
    'http://169.254.169.254/',
    'http://127.0.0.1:4001/',
    'not a url',
  ])
    assert.ok(serviceUrlProblem(bad, defaults), bad);
});

test('service_url_hosts replaces the list: a sovereign cloud is added by listing it with the others', () => {
  const policy = serviceUrlPolicy({ service_url_hosts: ['smba.trafficmanager.net', 'smba.example.sovereign.cloud', '*.bots.example.cn'] });
  assert.equal(serviceUrlProblem('https://smba.example.sovereign.cloud/teams/', policy), undefined);
  assert.equal(serviceUrlProblem('https://east.bots.example.cn/', policy), undefined);
  assert.equal(serviceUrlProblem('https://smba.trafficmanager.net/emea/', policy), undefined);
  assert.match(serviceUrlProblem('https://bots.example.cn/', policy) ?? '', /not a Bot Framework service URL host/, '*. is the names under it only');
  assert.ok(serviceUrlProblem('https://smba.infra.gov.teams.microsoft.us/teams', policy), 'no longer listed');
  assert.deepEqual(serviceUrlPolicy({}).hosts, defaults.hosts, 'absent: the default list');
});

test("a connector path keeps the serviceUrl's own path", () => {
  assert.equal(
    connectorUrl('https://smba.trafficmanager.net/amer', 'v3/conversations/a%3A1/activities'),
    'https://smba.trafficmanager.net/amer/v3/conversations/a%3A1/activities',
  );
  assert.equal(connectorUrl('https://smba.trafficmanager.net/amer/', 'v3/x'), 'https://smba.trafficmanager.net/amer/v3/x');
});
