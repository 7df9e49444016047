import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { setConfig, startTestKernel, waitFor, type TestKernel } from '@talon/testing';

const KEY = 'terminal-test-key-0123456789';
let k: TestKernel;
let off: TestKernel;

before(async () => {
  const only = ['terminal', 'auth', 'audit', 'error-envelope'];
  [k, off] = await Promise.all([
    startTestKernel({ only, config: `api_key = "${KEY}"\n[terminal]\nenabled = true\nshell = "/bin/sh"\nidle_timeout_secs = 5\n` }),
    startTestKernel({ only, config: `api_key = "${KEY}"\n` }),
  ]);
});
after(() => Promise.all([k?.stop(), off?.stop()]));

const wsUrl = (kernel: TestKernel, query = '') => `${kernel.url.replace('http', 'ws')}/api/terminal/ws${query}`;

/** The HTTP status of a refused handshake. */
function refused(url: string, options: WebSocket.ClientOptions = {}, protocols?: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocols, options);
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.on('open', () => {
      ws.close();
      reject(new Error('the handshake was accepted'));
    });
    ws.on('error', () => undefined);
  });
}

test('a real shell: started, output of input, resize, exit; each session is an audit entry', async () => {
  const ws = new WebSocket(wsUrl(k), ['talon', `bearer.${KEY}`]);
  const frames: Array<Record<string, unknown>> = [];
  ws.on('message', (m) => frames.push(JSON.parse(String(m)) as Record<string, unknown>));
  await new Promise((r) => ws.once('open', r));
  await waitFor(() => frames.some((f) => f.type === 'started'), 5000, 'started');
  ws.send(JSON.stringify({ type: 'resize', cols: 120, rows: 40 }));
  ws.send(JSON.stringify({ type: 'input', data: 'echo sum=$((40+2)); stty size\r' }));
  await waitFor(() => frames.some((f) => f.type === 'output' && /sum=42/.test(String(f.data))), 5000, 'output');
  await waitFor(() => frames.some((f) => f.type === 'output' && /40 120/.test(String(f.data))), 5000, 'resized');
  ws.send(JSON.stringify({ type: 'bogus' }));
  await waitFor(() => frames.some((f) => f.type === 'error' && /unknown frame type/.test(String(f.content))), 5000, 'error frame');
  ws.send(JSON.stringify({ type: 'input', data: 'exit 3\r' }));
  await waitFor(() => frames.some((f) => f.type === 'exit'), 5000, 'exit');
  assert.equal(frames.find((f) => f.type === 'exit')!.code, 3);
  await waitFor(
    async () => {
      const res = await k.request('/api/audit/recent?limit=500', { headers: { authorization: `Bearer ${KEY}` } });
      const types = ((await res.json()) as { entries: Array<{ event_type: string }> }).entries.map((e) => e.event_type);
      return types.includes('terminal_session_started') && types.includes('terminal_session_ended');
    },
    5000,
    'audit entries',
  );
});

test('refusals: no key 401, key in the URL 400, a foreign origin 403, a plain GET 426, off 403', async () => {
  assert.equal(await refused(wsUrl(k)), 401);
  assert.equal(await refused(wsUrl(k, `?token=${KEY}`), {}, [`bearer.${KEY}`]), 400);
  assert.equal(await refused(wsUrl(k), { headers: { origin: 'https://evil.example' } }, [`bearer.${KEY}`]), 403);
  const plain = await k.request('/api/terminal/ws', { headers: { authorization: `Bearer ${KEY}` } });
  assert.equal(plain.status, 426);
  assert.equal(await refused(wsUrl(off), {}, [`bearer.${KEY}`]), 403);
});

test('at most max_sessions at once (429), and an idle session is closed, saying why', async () => {
  await setConfig(k, 'terminal.max_sessions', 1);
  await setConfig(k, 'terminal.idle_timeout_secs', 1);
  try {
    const ws = new WebSocket(wsUrl(k), [`bearer.${KEY}`]);
    const frames: Array<Record<string, unknown>> = [];
    ws.on('message', (m) => frames.push(JSON.parse(String(m)) as Record<string, unknown>));
    const closed = new Promise<string>((resolve) => ws.once('close', (_code, reason) => resolve(String(reason))));
    await new Promise((r) => ws.once('open', r));
    assert.equal(await refused(wsUrl(k), {}, [`bearer.${KEY}`]), 429);
    assert.equal(await closed, 'idle timeout');
    assert.ok(frames.some((f) => f.type === 'error' && /idle for 1 s/.test(String(f.content))));
    const health = (await (await k.request('/api/terminal/health', { headers: { authorization: `Bearer ${KEY}` } })).json()) as { active_sessions: number };
    assert.equal(health.active_sessions, 0);
  } finally {
    await setConfig(k, 'terminal.max_sessions', 4);
    await setConfig(k, 'terminal.idle_timeout_secs', 5);
  }
});

test('health says whether a PTY can be had', async () => {
  const res = await k.request('/api/terminal/health', { headers: { authorization: `Bearer ${KEY}` } });
  const body = (await res.json()) as { ok: boolean; pty_available: boolean; loopback_only: boolean; shell: string };
  assert.equal(res.status, 200);
  assert.deepEqual([body.ok, body.pty_available, body.loopback_only, body.shell], [true, true, true, '/bin/sh']);
  const offHealth = (await (await off.request('/api/terminal/health', { headers: { authorization: `Bearer ${KEY}` } })).json()) as {
    ok: boolean;
    enabled: boolean;
  };
  assert.deepEqual([offHealth.ok, offHealth.enabled], [false, false]);
});
