import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startTestKernel, type TestKernel } from '@talon/testing';
import { otherCredential } from '../services/principals.ts';

const KEY = 'admin-key-0123456789';
let k: TestKernel;
before(async () => {
  k = await startTestKernel({ only: ['auth', 'pairing', 'system', 'config-api', 'error-envelope'], config: `api_key = "${KEY}"\n[pairing]\nenabled = true\n` });
});
after(() => k?.stop());

const admin = { authorization: `Bearer ${KEY}` };

test("a paired device's token is accepted as a user: everyday routes pass, administration is 403, removal revokes it at once", async () => {
  const { pairing_code } = (await (await k.request('/api/pairing/request', { method: 'POST', headers: admin })).json()) as { pairing_code: string };
  const device = (await (await k.request('/api/pairing/complete', { method: 'POST', json: { pairing_code, display_name: 'phone' } })).json()) as {
    device_id: string;
    token: string;
  };
  const asDevice = { authorization: `Bearer ${device.token}` };
  assert.equal((await k.request('/api/status', { headers: asDevice })).status, 200);
  for (const path of ['/api/config', '/api/pairing/devices']) {
    const res = await k.request(path, { headers: asDevice });
    assert.equal(res.status, 403, path);
    assert.match(((await res.json()) as { error: string }).error, /administrators only/);
  }
  assert.equal((await k.request(`/api/pairing/devices/${device.device_id}`, { method: 'DELETE', headers: admin })).status, 204);
  assert.equal((await k.request('/api/status', { headers: asDevice })).status, 401);
});

test('a session cookie passes reads; a change made with it must carry the service as its Origin', () => {
  // What oidc's authenticate tap answers for a valid session cookie.
  const session = { subject: 'oidc:x:1', role: 'admin', cookie: true } as const;
  const req = (method: string, headers: Record<string, string>) => ({
    method,
    url: '/api/agents',
    headers: { host: 'talon.test', cookie: 'talon_session=s', ...headers },
  });
  assert.equal(otherCredential(req('GET', {}), session), 'pass');
  assert.equal(otherCredential(req('POST', { origin: 'https://talon.test' }), session), 'pass');
  assert.deepEqual(otherCredential(req('POST', { origin: 'https://evil.example' }), session), {
    forbidden: 'a change made with the session cookie must come from this service (Origin header)',
  });
  assert.notEqual(otherCredential(req('DELETE', {}), session), 'pass');
  assert.equal(otherCredential({ method: 'GET', url: '/api/agents', headers: {} }, undefined), 'none');
});

test('authStatus tells whether a value is the api_key, and verifies a header', () => {
  const auth = k.kernel.services.view<{ isApiKey(v: string): boolean; verify(h?: string): string | undefined }>('auth.status');
  assert.equal(auth.isApiKey(KEY), true);
  assert.equal(auth.isApiKey('another-value-0123456'), false);
  assert.equal(auth.verify(`Bearer ${KEY}`), undefined);
  assert.match(auth.verify('Bearer nope')!, /Invalid API key/);
});

test('a paired device may not open a terminal, list or delete backups, or run quick init (operations, issue 15)', () => {
  // What pairing's authenticate tap answers for a device token.
  const device = { subject: 'device:d', role: 'user' } as const;
  for (const url of ['/api/terminal/ws', '/api/terminal/health', '/api/backups', '/api/backups/x.tar.gz', '/api/backup', '/api/init']) {
    const verdict = otherCredential({ method: 'GET', url, headers: { authorization: 'Bearer dev' } }, device);
    assert.ok(typeof verdict === 'object' && /administrators only/.test(verdict.forbidden), url);
  }
  assert.equal(otherCredential({ method: 'GET', url: '/api/agents', headers: { authorization: 'Bearer dev' } }, device), 'pass');
});

test('a paired device may not change what code the host runs or where data leaves it, but may use what is installed', () => {
  // What pairing's authenticate tap answers for a device token.
  const device = { subject: 'device:d', role: 'user' } as const;
  const verdict = (method: string, url: string) => otherCredential({ method, url, headers: { authorization: 'Bearer dev' } }, device);
  const refused = [
    ['POST', '/api/mcp/servers'],
    ['PUT', '/api/mcp/servers/notes'],
    ['DELETE', '/api/mcp/servers/notes'],
    ['POST', '/api/mcp/reload'],
    ['POST', '/api/plugins/install'],
    ['POST', '/api/plugins/scaffold'],
    ['POST', '/api/plugins/guard/install-deps'],
    ['POST', '/api/skills/install'],
    ['POST', '/api/skills/create'],
    ['POST', '/api/hub/install'],
    ['POST', '/api/extensions/install'],
    ['POST', '/api/hands/install'],
    ['DELETE', '/api/hands/digest'],
    ['POST', '/api/hands/digest/install-deps'],
    ['POST', '/api/webhooks'],
    ['PUT', '/api/webhooks/events/x'],
  ];
  for (const [method, url] of refused) {
    const v = verdict(method, url);
    assert.ok(typeof v === 'object' && /administrators only/.test(v.forbidden), `${method} ${url}`);
  }
  const allowed = [
    ['GET', '/api/mcp/servers'],
    ['POST', '/api/mcp'],
    ['GET', '/api/plugins'],
    ['GET', '/api/skills'],
    ['POST', '/api/hands/digest/activate'],
    ['POST', '/api/hands/instances/x/pause'],
    ['DELETE', '/api/hands/instances/x'],
    ['GET', '/api/webhooks'],
    ['POST', '/api/agents'],
  ];
  for (const [method, url] of allowed) assert.equal(verdict(method, url), 'pass', `${method} ${url}`);
});
