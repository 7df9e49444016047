/**
 * Issue 28's crash test for Matrix: a real service process (`node --import tsx bin/talon.ts`) with the Matrix adapter
 * on the fake homeserver. The homeserver takes the reply's send (the event is created) but holds its answer, so the
 * chunk's row is `sending` when the process is killed with SIGKILL. The next process finds the dead one's chunk, sends
 * it again with the same transaction id (platformDedup), and the homeserver answers with the event it made the first
 * time: two attempts, one event in the room, the row `sent`.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FakeProvider, freePort, startMatrixFake, waitFor, type MatrixFake } from '@talon/testing';
import { person } from './helpers.ts';

const root = path.resolve(import.meta.dirname, '../../..');
const home = mkdtempSync(path.join(tmpdir(), 'talon-matrix-kill-'));
const fake = new FakeProvider();
let hs: MatrixFake | undefined;
let child: ChildProcess | undefined;

async function startService(port: number, token: string): Promise<ChildProcess> {
  const output: string[] = [];
  const proc = spawn(process.execPath, ['--import', 'tsx', 'bin/talon.ts'], {
    cwd: root,
    env: { ...process.env, TALON_HOME: home, TALON_API_LISTEN: `127.0.0.1:${port}`, KILL_TEST_KEY: 'sk-test', KILL_TEST_MX: token },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.stdout!.on('data', (c: Buffer) => output.push(c.toString()));
  proc.stderr!.on('data', (c: Buffer) => output.push(c.toString()));
  await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/api/health`)).status === 200, 90_000, 'the service to answer').catch((err: Error) => {
    throw new Error(`${err.message}; exit ${proc.exitCode}; output: ${output.join('').slice(-3000)}`);
  });
  return proc;
}

function killGroup(proc: ChildProcess | undefined): void {
  try {
    if (proc?.pid) process.kill(-proc.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

after(async () => {
  killGroup(child);
  await hs?.stop();
  await fake.stop();
  rmSync(home, { recursive: true, force: true });
});

test('killed between sending and sent: the re-send carries the same txnId and the homeserver makes one event', { timeout: 240_000 }, async () => {
  await fake.start();
  fake.setFallback({ text: 'the one reply' });
  hs = await startMatrixFake();
  writeFileSync(
    path.join(home, 'config.toml'),
    [
      'log_level = "warn"',
      '[default_model]',
      'provider = "openai"',
      'model = "fake-model"',
      `base_url = "${fake.url}/v1"`,
      'api_key_env = "KILL_TEST_KEY"',
      '[llm]',
      'max_retries = 0',
      '[channels.matrix]',
      'token_env = "KILL_TEST_MX"',
      `homeserver_url = "${hs.url}"`,
      `user_id = "${hs.userId}"`,
      'dm_policy = "open"',
      '',
    ].join('\n'),
  );
  const port = await freePort();
  const api = (p: string, init?: RequestInit) => fetch(`http://127.0.0.1:${port}${p}`, init);
  child = await startService(port, hs.token);
  const spawned = await api('/api/agents', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ manifest_toml: 'name = "helper"\n[model]\nprovider = "default"\nmodel = "default"\n' }),
  });
  assert.equal(spawned.status, 201);
  await waitFor(async () => ((await (await api('/api/channels/matrix')).json()) as { state: string }).state === 'connected', 60_000, 'matrix connected');

  const hold = hs.holdSends();
  const room = hs.createRoom({ members: [person(1)] });
  hs.injectMessage(room, person(1), 'answer me once');
  await waitFor(() => hold.held() >= 1, 60_000, 'the reply sent and held by the homeserver');
  const [first] = hs.sendAttempts;
  assert.equal(hs.sent.length, 1, 'the homeserver made the event');
  killGroup(child);
  await new Promise((resolve) => child!.once('exit', resolve));
  hold.release();

  child = await startService(port, hs.token);
  await waitFor(() => hs!.sendAttempts.length >= 2, 120_000, 'the chunk sent again by the next process');
  assert.deepEqual(
    hs.sendAttempts.map((a) => a.txnId),
    [first!.txnId, first!.txnId],
    'the same transaction id both times',
  );
  assert.equal(hs.sent.filter((e) => e.room_id === room).length, 1, 'one event in the room: the homeserver deduplicated the re-send');
  await waitFor(
    async () => {
      const problems = (await (await api('/api/channels/journal/problems?channel=matrix')).json()) as { items?: unknown[] };
      return (problems.items ?? []).length === 0 ? true : undefined;
    },
    30_000,
    'no failed or unknown chunk: the row ended sent',
  );
  assert.equal(fake.requests.filter((r) => JSON.stringify(r.body.messages).includes('answer me once')).length, 1, 'one turn for the message');
});
