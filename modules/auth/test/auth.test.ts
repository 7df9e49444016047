import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import http from 'node:http';
import WebSocket from 'ws';
import { setConfig, startTestKernel, type TestKernel } from '@talon/testing';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
const only = ['auth', 'system', 'dashboard', 'error-envelope', 'config-api', 'cors', 'auth-probe'];
let keyed: TestKernel;
let open: TestKernel;

before(async () => {
  [keyed, open] = await Promise.all([
    startTestKernel({ only, config: `api_key = "s3cret-key-0123456789"\nmodule_paths = [${JSON.stringify(fixtures)}]\n` }),
    startTestKernel({ only, config: `module_paths = [${JSON.stringify(fixtures)}]\n` }),
  ]);
});
after(() => Promise.all([keyed?.stop(), open?.stop()]));

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

async function expect401(res: Response, message: string): Promise<void> {
  assert.equal(res.status, 401);
  assert.equal(res.headers.get('www-authenticate'), 'Bearer');
  assert.deepEqual(await res.json(), { error: message });
}

test('with a key: no header is 401 "Missing ..." on private routes, unknown routes too', async () => {
  for (const p of ['/api/status', '/api/health/detail', '/probe/private', '/api/config', '/no/such/route']) {
    await expect401(await keyed.request(p), 'Missing Authorization: Bearer <api_key> header');
  }
  await expect401(await keyed.request('/api/mcp', { method: 'POST', json: {} }), 'Missing Authorization: Bearer <api_key> header');
  await expect401(
    await keyed.request('/api/status', { headers: { authorization: 'Basic czNjcmV0LWtleQ==' } }),
    'Missing Authorization: Bearer <api_key> header',
  );
});

test('with a key: a wrong key is 401 "Invalid API key", whatever its length', async () => {
  for (const wrong of ['s3cret-key-0123456789-0123456788', 's3cret', 's3cret-key-0123456789-0123456789-and-more', 'x']) {
    await expect401(await keyed.request('/api/status', { headers: bearer(wrong) }), 'Invalid API key');
  }
});

test('with a key: the right key passes', async () => {
  const res = await keyed.request('/api/status', { headers: bearer('s3cret-key-0123456789') });
  assert.equal(res.status, 200);
  assert.equal(((await res.json()) as { status: string }).status, 'running');
  assert.equal((await keyed.request('/probe/private', { headers: bearer('s3cret-key-0123456789') })).status, 200);
  assert.equal((await keyed.request('/no/such/route', { headers: bearer('s3cret-key-0123456789') })).status, 404);
});

test('with a key: GET /api/health, GET /, POST /mcp and public routes stay open', async () => {
  assert.equal((await keyed.request('/api/health')).status, 200);
  const front = await keyed.request('/');
  assert.equal(front.status, 200);
  assert.match(front.headers.get('content-type') ?? '', /^text\/html/);
  assert.equal((await keyed.request('/mcp', { method: 'POST', json: {} })).status, 200);
  assert.deepEqual(await (await keyed.request('/probe/public')).json(), { open: true });
});

test('with a key: a route its owner opens at run time (config.publicWhen) is public only while it says so; a throwing one stays closed', async () => {
  await expect401(await keyed.request('/probe/switch'), 'Missing Authorization: Bearer <api_key> header');
  await setConfig(keyed, 'auth_probe.open', true);
  try {
    assert.deepEqual(await (await keyed.request('/probe/switch')).json(), { switched: true });
  } finally {
    await setConfig(keyed, 'auth_probe.open', false);
  }
  await expect401(await keyed.request('/probe/switch'), 'Missing Authorization: Bearer <api_key> header');
  await expect401(await keyed.request('/probe/broken-switch'), 'Missing Authorization: Bearer <api_key> header');
  assert.equal((await keyed.request('/probe/broken-switch', { headers: bearer('s3cret-key-0123456789') })).status, 200);
});

test('with a key: a CORS preflight passes without credentials', async () => {
  const res = await keyed.request('/api/status', {
    method: 'OPTIONS',
    headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
  });
  assert.equal(res.status, 204);
  assert.equal(res.headers.get('access-control-allow-origin'), 'http://localhost:5173');
});

test('without a key: everything is open', async () => {
  for (const p of ['/api/status', '/api/health/detail', '/probe/private', '/api/config']) {
    assert.equal((await open.request(p)).status, 200, p);
  }
  // A stray header does no harm.
  assert.equal((await open.request('/api/status', { headers: bearer('whatever') })).status, 200);
});

test('a key set at run time applies to the next request, and clearing it opens the API again', async () => {
  const weak = await open.request('/api/config/set', { method: 'POST', json: { path: 'api_key', value: 'changeme' } });
  assert.equal(weak.status, 400);
  assert.match(((await weak.json()) as { error: string }).error, /'api_key': leave it empty .* not a placeholder/);
  const set = await open.request('/api/config/set', { method: 'POST', json: { path: 'api_key', value: 'fresh-key-0123456789' } });
  assert.equal(set.status, 200);
  assert.deepEqual(await set.json(), { status: 'updated', path: 'api_key', value: '<redacted>', restart_required: false });
  await expect401(await open.request('/api/status'), 'Missing Authorization: Bearer <api_key> header');
  assert.equal((await open.request('/api/status', { headers: bearer('fresh-key-0123456789') })).status, 200);
  const cleared = await open.request('/api/config/set', { method: 'POST', headers: bearer('fresh-key-0123456789'), json: { path: 'api_key', value: '' } });
  assert.equal(cleared.status, 200);
  assert.equal((await open.request('/api/status')).status, 200);
});

test('a weak or placeholder key stops start-up naming api_key (exit code 2 from the CLI)', async () => {
  const longPlaceholders = [
    'your-api-key-here',
    'YOUR_API_TOKEN_GOES_HERE',
    'changeme-changeme-please',
    'replace-me-with-a-real-key',
    '${TALON_API_KEY_VALUE}',
  ];
  for (const key of ['changeme', 'short-key', 'undefined', '0000000000000000', ...longPlaceholders]) {
    await assert.rejects(
      startTestKernel({ only: ['auth'], config: `api_key = "${key}"\n` }),
      (err: Error) => err.name === 'ConfigError' && /'api_key': leave it empty .* at least 16 characters/.test(err.message),
      key,
    );
  }
  // A random key of the same length passes.
  const fine = await startTestKernel({ only: ['auth'], config: 'api_key = "q7Vx2mKp9LwR4tZc8NbY"\n' });
  await fine.stop();
});

test('without a key, a network listen address stops start-up naming api_listen, api_key and the opt-out', async () => {
  await assert.rejects(
    startTestKernel({ only: ['auth'], config: 'api_listen = "0.0.0.0:0"\n' }),
    (err: Error) => err.name === 'ConfigError' && /api_listen = "0\.0\.0\.0:0".*api_key is empty.*\[auth\] allow_keyless_network = true/.test(err.message),
  );
  const allowed = await startTestKernel({ only: ['auth', 'system'], config: 'api_listen = "0.0.0.0:0"\n[auth]\nallow_keyless_network = true\n' });
  try {
    assert.equal((await fetch(`http://127.0.0.1:${allowed.kernel.port}/api/status`)).status, 200);
  } finally {
    await allowed.stop();
  }
});

test('without a key, a request relayed by a proxy (or from beyond loopback) is refused with 401', async () => {
  for (const header of ['x-forwarded-for', 'forwarded', 'x-real-ip']) {
    const res = await open.request('/api/status', { headers: { [header]: '203.0.113.7' } });
    assert.equal(res.status, 401, header);
    assert.match(((await res.json()) as { error: string }).error, /does not serve requests relayed by a proxy/);
  }
  assert.equal((await open.request('/api/health', { headers: { 'x-forwarded-for': '203.0.113.7' } })).status, 200, 'public routes stay public');
});

test('with a key, loopback gets no exemption', async () => {
  await expect401(await keyed.request('/api/status'), 'Missing Authorization: Bearer <api_key> header');
});

test('a browser WebSocket authenticates with an offered subprotocol bearer.<key>, never the URL', async () => {
  const wsUrl = keyed.url.replace('http', 'ws') + '/probe/ws';
  const open = (protocols: string[]) =>
    new Promise<{ protocol: string; message: string } | { status: number }>((resolve, reject) => {
      const ws = new WebSocket(wsUrl, protocols);
      ws.once('message', (data) => {
        resolve({ protocol: ws.protocol, message: String(data) });
        ws.close();
      });
      ws.once('unexpected-response', (_req, res) => resolve({ status: res.statusCode ?? 0 }));
      ws.once('error', reject);
    });
  assert.deepEqual(await open(['talon', 'bearer.s3cret-key-0123456789']), { protocol: 'talon', message: 'hello' });
  assert.deepEqual(await open(['talon', 'bearer.wrong-key-0123456789']), { status: 401 });
  assert.deepEqual(await open(['talon']), { status: 401 });
  const inQuery = await keyed.request('/probe/private?api_key=s3cret-key-0123456789&token=s3cret-key-0123456789');
  assert.equal(inQuery.status, 401, 'a key in the query string is never read');
});

/** fetch() cannot set Host: a plain node:http request can. */
function withHost(k: TestKernel, method: string, path: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: k.kernel.port, method, path, headers: { host, 'content-type': 'application/json' } }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.once('error', reject);
    req.end(method === 'POST' ? '{}' : undefined);
  });
}

test('without a key, a request addressed to another host name is refused, public routes too (DNS rebinding)', async () => {
  const res = await withHost(open, 'GET', '/api/status', 'evil.example:4545');
  assert.equal(res.status, 403);
  assert.match((JSON.parse(res.body) as { error: string }).error, /Host 'evil.example:4545' is not this machine/);
  assert.equal((await withHost(open, 'POST', '/mcp', 'rebind.attacker.test')).status, 403);
  for (const host of ['localhost:4545', '127.0.0.1', '[::1]:4545', 'app.localhost']) {
    assert.equal((await withHost(open, 'GET', '/api/status', host)).status, 200, host);
  }
  assert.equal((await withHost(keyed, 'GET', '/api/health', 'talon.example.com')).status, 200, 'with a key any Host is fine');
});
