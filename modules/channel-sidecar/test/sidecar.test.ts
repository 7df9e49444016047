/**
 * The sidecar adapter's own behaviour through a real kernel, with our Node and Python sidecars (fixtures/): every
 * event and command of protocol v1, the cleared environment, the stop sequence, the restart policy's give-up and the
 * ready timeout. The Python runs are skipped when python3 is absent.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startAgentTestKernel, waitFor, type AgentTestKernel } from '@talon/testing';
import { startSidecarPlatform, type SidecarPlatform } from './platform.ts';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const ONLY = ['agents', 'auth', 'error-envelope', 'secrets', 'net', 'tasks', 'commands', 'bindings', 'tools', 'channels', 'channel-sidecar'];

/** The real interpreter behind python3 (a pyenv shim needs variables the sandbox clears). */
function python(): string | undefined {
  try {
    return execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

const RUNTIMES = [
  { name: 'Node', argv: () => [process.execPath, fixture('sidecar.mjs')] },
  { name: 'Python', argv: () => (python() ? [python()!, fixture('sidecar.py')] : undefined) },
];

interface State {
  state: string;
  last_error: string | null;
}

async function boot(): Promise<AgentTestKernel> {
  const k = await startAgentTestKernel({ only: ONLY });
  await k.spawnAgent('helper');
  return k;
}

async function configure(k: AgentTestKernel, body: Record<string, unknown>): Promise<void> {
  const res = await k.request('/api/channels/sidecar/configure', { method: 'POST', json: { dm_policy: 'open', group_policy: 'mention', ...body } });
  assert.equal(res.status, 200, await res.text());
}

const state = async (k: AgentTestKernel) => (await (await k.request('/api/channels/sidecar')).json()) as State;
const connected = (k: AgentTestKernel) => waitFor(async () => (await state(k)).state === 'connected', 15_000, 'sidecar connected');

for (const runtime of RUNTIMES) {
  describe(`channel-sidecar with the ${runtime.name} sidecar`, () => {
    const argv = runtime.argv();
    let k: AgentTestKernel;
    let platform: SidecarPlatform;
    before(async () => {
      if (!argv) return;
      platform = await startSidecarPlatform();
      k = await boot();
      await configure(k, {
        command: argv[0],
        args: argv.slice(1),
        env: [`PLATFORM_PORT=${platform.port}`, `EXPECTED_TOKEN=${platform.token}`],
        token_env: 'FIXTURE_TOKEN',
        token: platform.token,
        heartbeat_secs: 0.3,
        shutdown_grace_secs: 2,
      });
      await connected(k);
      // The program may report `ready` before its own line to the test platform is up (Python starts slower than Node):
      // its hello and the ready_ack it relays are awaited, not assumed.
      await waitFor(() => (platform.hellos.length > 0 && platform.count('ready_ack') > 0) || undefined, 15_000, 'the program on the platform line');
    });
    after(async () => {
      await k?.stop();
      await platform?.stop();
    });

    it('runs the program with a cleared environment: PATH, HOME, the configured variables and the token', (t) => {
      if (!argv) return t.skip('python3 is not installed');
      const keys = Object.keys(platform.hellos[0].env).filter((key) => key !== 'TALON_SANDBOX_RUN' && !key.startsWith('LC_') && key !== '_');
      assert.deepEqual(keys.sort(), ['EXPECTED_TOKEN', 'FIXTURE_TOKEN', 'HOME', 'PATH', 'PLATFORM_PORT', 'PWD'].sort());
      assert.equal(platform.hellos[0].env.FIXTURE_TOKEN, platform.token);
    });

    it('answers ready with ready_ack and sends heartbeats', async (t) => {
      if (!argv) return t.skip('python3 is not installed');
      assert.equal(platform.count('ready_ack'), 1);
      await waitFor(() => platform.count('heartbeat') >= 2 || undefined, 5_000, 'heartbeats');
    });

    it('journals a message and sends the reply with its thread; typing while the turn runs', async (t) => {
      if (!argv) return t.skip('python3 is not installed');
      k.fake.enqueue({ text: 'threaded answer', delayMs: 300 });
      platform.message('g1', 'hello bot', { is_group: true, thread_id: 'th1', metadata: { was_mentioned: true } });
      await waitFor(() => platform.sent('g1', 'th1').length || undefined, 15_000, 'the reply');
      assert.deepEqual(platform.sent('g1', 'th1'), ['threaded answer']);
      const send = platform.commands.find((c) => c.method === 'send' && c.params?.channel_id === 'g1');
      assert.deepEqual(send?.params, {
        channel_id: 'g1',
        text: 'threaded answer',
        content: { Text: 'threaded answer' },
        thread_id: 'th1',
        user: { platform_id: 'g1', display_name: 'g1', librefang_user: null },
      });
      assert.ok(platform.count('typing', 'g1') >= 1, 'typing sent (the program listed the capability)');
    });

    it('takes the legacy minimal message, a slash command, and tolerates typing, error, unknown methods and noise', async (t) => {
      if (!argv) return t.skip('python3 is not installed');
      platform.emit('this line is not JSON');
      platform.emit({ method: 'typing', params: { user_id: 'u', user_name: 'n', is_typing: true } });
      platform.emit({ method: 'error', params: { message: 'a passing platform hiccup' } });
      platform.emit({ method: 'interactive_reply_v2', params: { whatever: 1 } });
      platform.emit({ method: 'ready', params: null });
      k.fake.enqueue({ text: 'to bob' });
      platform.emit({ method: 'message', params: { user_id: 'bob', user_name: 'Bob', text: 'hi' } });
      await waitFor(() => platform.sent('bob').length || undefined, 15_000, 'the reply to the minimal message');
      platform.emit({
        method: 'message',
        params: { user_id: 'c', user_name: 'C', content: { Command: { name: 'weather', args: ['tomorrow'] } }, message_id: 'm-cmd', channel_id: 'cmd' },
      });
      await waitFor(() => platform.sent('cmd').length || undefined, 15_000, 'the reply to the command');
      // Flattened back to `/weather tomorrow`, the commands module took it (and knows no such command).
      assert.match(platform.sent('cmd')[0], /unknown command '\/weather'/);
      assert.equal((await state(k)).state, 'connected');
      assert.equal(platform.count('ready_ack'), 1, 'a second ready is not acknowledged again');
    });

    it('a message delivered twice with its message_id is journaled once', async (t) => {
      if (!argv) return t.skip('python3 is not installed');
      k.fake.enqueue({ text: 'once' }, { text: 'twice?' });
      for (let i = 0; i < 2; i++) platform.message('dup', 'again', { message_id: 'same-id' });
      await waitFor(() => platform.sent('dup').length || undefined, 15_000, 'the reply');
      await new Promise((resolve) => setTimeout(resolve, 800));
      assert.deepEqual(platform.sent('dup'), ['once']);
    });

    it('signs in by the QR code the program publishes: pending, scanned, authenticated', async (t) => {
      if (!argv) return t.skip('python3 is not installed');
      platform.emit({ method: 'qr_ready', params: { qr_code: 'wxp://code-1', qr_url: 'https://login.example/qr', expires_at: '2099-01-01T00:00:00Z' } });
      const started = await waitFor(
        async () => {
          const res = await k.request('/api/channels/sidecar/qr/start', { method: 'POST' });
          return res.status === 200 ? ((await res.json()) as { qr_code: string; expires_at: string }) : undefined;
        },
        10_000,
        'qr start',
      );
      assert.equal(started.qr_code, 'wxp://code-1');
      const status = async () => ((await (await k.request('/api/channels/sidecar/qr/status')).json()) as { status: string }).status;
      assert.equal(await status(), 'pending');
      platform.emit({ method: 'qr_status', params: { status: 'scanning' } });
      await waitFor(async () => (await status()) === 'scanned' || undefined, 5_000, 'scanned');
      platform.emit({ method: 'qr_status', params: { status: 'confirmed', message: 'Login confirmed' } });
      await waitFor(async () => (await status()) === 'authenticated' || undefined, 5_000, 'authenticated');
      await connected(k);
    });

    it('stops politely: shutdown, and the program exits on it', async (t) => {
      if (!argv) return t.skip('python3 is not installed');
      const res = await k.request('/api/channels/sidecar/disable', { method: 'PUT' });
      assert.equal(res.status, 200, await res.text());
      await waitFor(() => platform.count('shutdown') >= 1 || undefined, 5_000, 'shutdown sent');
      await waitFor(() => !running(argv[argv.length - 1]) || undefined, 5_000, 'the program gone');
      assert.deepEqual(platform.signals, [], 'no SIGTERM was needed');
    });
  });
}

/** Whether a process whose command line holds `token` runs (pids seen inside a PID namespace are not ours). */
function running(token: string): boolean {
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name)))
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(token) && !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ')) return true;
    } catch {
      // gone meanwhile
    }
  return false;
}

describe('channel-sidecar restart policy', () => {
  let k: AgentTestKernel;
  before(async () => {
    k = await boot();
  });
  after(async () => {
    await k?.stop();
  });

  it('a crash loop is retried with backoff, then given up with the last cause', async () => {
    const started = Date.now();
    await configure(k, {
      command: process.execPath,
      args: [fixture('sidecar.mjs')],
      env: ['FIXTURE_MODE=crash'],
      token_env: 'FIXTURE_TOKEN',
      token: 'a-secret-token-value',
      restart_initial_backoff_ms: 100,
      restart_max_backoff_ms: 400,
      restart_max_retries: 4,
    });
    const gaveUp = await waitFor(
      async () => {
        const s = await state(k);
        return s.last_error?.includes('gave up') ? s : undefined;
      },
      20_000,
      'gave up',
    );
    // 100 + 200 + 400 + 400 ms of backoff at the least, with up to 20 % jitter on top.
    assert.ok(Date.now() - started >= 1100, `backed off (${Date.now() - started} ms)`);
    assert.equal(gaveUp.state, 'error');
    assert.match(gaveUp.last_error!, /gave up after 4 consecutive failures; last: the sidecar program exited with code 3/);
    await new Promise((resolve) => setTimeout(resolve, 800));
    assert.equal((await state(k)).last_error, gaveUp.last_error, 'not restarted after giving up');
  });

  /** A program deaf to shutdown and SIGTERM that never sends ready; `token` in its argv finds it in /proc. */
  const deaf = (token: string) => ['-e', `process.on('SIGTERM', () => {}); setInterval(() => {}, 1000)`, token];

  it('a program that sends no ready is killed after ready_timeout_secs; a stop ends a deaf one with SIGKILL', async () => {
    const first = `first-${randomUUID()}`;
    await configure(k, {
      command: process.execPath,
      args: deaf(first),
      env: [],
      ready_timeout_secs: 0.5,
      restart_max_retries: 1,
      restart_initial_backoff_ms: 5000,
    });
    await waitFor(() => running(first) || undefined, 10_000, 'the program started');
    const err = await waitFor(
      async () => {
        const s = await state(k);
        return s.last_error?.includes('no ready') ? s.last_error : undefined;
      },
      10_000,
      'ready timeout',
    );
    assert.match(err, /no ready from the sidecar program within 0.5 s: killed/);
    assert.equal(running(first), false, 'killed');
    const second = `second-${randomUUID()}`;
    await configure(k, { command: process.execPath, args: deaf(second), ready_timeout_secs: 60, shutdown_grace_secs: 0.4 });
    await waitFor(() => running(second) || undefined, 10_000, 'the second program');
    await k.request('/api/channels/sidecar/disable', { method: 'PUT' });
    await waitFor(() => !running(second) || undefined, 5_000, 'killed on stop');
  });
});
