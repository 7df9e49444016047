/**
 * kill -9 during a run: the service process dies mid-step; once the next process finds the dead node (three missed
 * heartbeats), the run is Failed (interrupted), never left Running. Real subprocesses (`node --import tsx bin/talon.ts`) on a temporary TALON_HOME.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn as spawnProcess, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FakeProvider, freePort, waitFor } from '@talon/testing';
import { call, createWorkflow, FAKE_KEY_ENV, modelConfig, spawn } from './helpers.ts';

const root = path.resolve(import.meta.dirname, '../../..');
const home = mkdtempSync(path.join(tmpdir(), 'talon-wf-crash-'));
const fake = new FakeProvider();
const children: ChildProcess[] = [];

after(async () => {
  for (const child of children) killGroup(child, 'SIGKILL');
  await fake.stop();
  rmSync(home, { recursive: true, force: true });
});

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // already gone
  }
}

/** Starts the service in its own process group and waits until it answers. */
async function startService(
  port: number,
): Promise<{ child: ChildProcess; request: (p: string, init?: RequestInit & { json?: unknown }) => Promise<Response> }> {
  const child = spawnProcess(process.execPath, ['--import', 'tsx', 'bin/talon.ts'], {
    cwd: root,
    env: { ...process.env, TALON_HOME: home, [FAKE_KEY_ENV]: 'sk-test' },
    detached: true,
    stdio: 'ignore',
  });
  children.push(child);
  const base = `http://127.0.0.1:${port}`;
  const request = (p: string, init: RequestInit & { json?: unknown } = {}) => {
    const { json, ...rest } = init;
    return fetch(base + p, {
      ...rest,
      headers: json === undefined ? rest.headers : { 'content-type': 'application/json' },
      body: json === undefined ? rest.body : JSON.stringify(json),
    });
  };
  await waitFor(async () => (await request('/api/health')).status === 200, 60_000, 'the service to answer');
  return { child, request };
}

test('kill -9 during a workflow run: after the restart the run is Failed (interrupted), not Running', { timeout: 150_000 }, async () => {
  await fake.start();
  const port = await freePort();
  // The test polls every 20 ms, and while the killed process still looks live each process allows half the rate
  // (docs/fleet.md, rate limits): a rate no poll here can reach.
  writeFileSync(path.join(home, 'config.toml'), `api_listen = "127.0.0.1:${port}"\nlog_level = "warn"\nrate_limit_per_second = 10000\n${modelConfig(fake)}\n`);
  const first = await startService(port);
  const agent = await spawn(first, 'crash-agent');
  const id = await createWorkflow(first, { name: 'interrupted', steps: [{ agent_id: agent }, { agent_id: agent }] });
  fake.setFallback({ text: 'too late', delayMs: 5000 });
  const pending = first.request(`/api/workflows/${id}/run`, { method: 'POST', json: { input: 'go' } }).catch(() => undefined);
  await waitFor(() => fake.requests.length > 0, 20_000, 'the first step to reach the provider');
  const running = await call<Array<{ id: string; state: string }>>(first, `/api/workflows/${id}/runs`);
  assert.equal(running.body[0].state, 'Running');

  const exited = new Promise((resolve) => first.child.once('exit', resolve));
  killGroup(first.child, 'SIGKILL');
  await exited;
  await pending;

  fake.setFallback({ text: 'ok' });
  const second = await startService(port);
  // The killed process's node row still looks live until it misses three heartbeats (6 s): then the new process
  // finds it dead and fails its runs.
  type Run = { id: string; state: string; error: string; completed_at: string | null };
  const runs = (await waitFor(
    async () => {
      const list = (await call<Run[]>(second, `/api/workflows/${id}/runs`)).body;
      return list[0]?.state === 'Failed' ? list : undefined;
    },
    20_000,
    'the interrupted run to be Failed',
  ))!;
  assert.equal(runs.length, 1);
  assert.match(runs[0].error, /interrupted: the service stopped while the run was in progress/);
  assert.ok(runs[0].completed_at);
  // The service runs workflows again as usual.
  const again = await call<{ status: string }>(second, `/api/workflows/${id}/run`, { method: 'POST', json: { input: 'go' } });
  assert.equal(again.body.status, 'completed', JSON.stringify(again.body));
  const exitedAgain = new Promise((resolve) => second.child.once('exit', resolve));
  killGroup(second.child, 'SIGTERM');
  await exitedAgain;
});
