/**
 * Video tasks outlive the process that took them: a graceful restart mid-poll, a process killed with SIGKILL
 * mid-poll (a real child process), and two processes on one home. In each, the scripted driver's call log (shared by
 * the processes through the home) shows every task completed exactly once and never polled by two at the same time.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestKernel, waitFor, type TestKernel } from '@talon/testing';
import type { VideoTaskView } from '@talon/media';
import { clearProviderEnv, count, scriptedCalls, videoKernelOptions } from './video-setup.ts';

clearProviderEnv();

const root = path.resolve(import.meta.dirname, '../../..');
const homes: string[] = [];
const kernels: TestKernel[] = [];
let child: ChildProcess | undefined;

after(async () => {
  try {
    if (child?.pid && child.exitCode === null && child.signalCode === null) process.kill(-child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
  await Promise.all(kernels.map((k) => k.stop().catch(() => undefined)));
  for (const home of homes) rmSync(home, { recursive: true, force: true });
});

function newHome(): string {
  const home = mkdtempSync(path.join(tmpdir(), 'talon-video-'));
  homes.push(home);
  return home;
}

async function boot(home: string): Promise<TestKernel> {
  const k = await startTestKernel({ ...videoKernelOptions(), home });
  kernels.push(k);
  return k;
}

async function submit(url: string, prompt: string): Promise<string> {
  const res = await fetch(`${url}/api/media/video`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ prompt, provider: 'scripted' }),
  });
  assert.equal(res.status, 202, await res.clone().text());
  return ((await res.json()) as { task_id: string }).task_id;
}

const status = async (url: string, id: string) => ((await (await fetch(`${url}/api/media/video/${id}`)).json()) as VideoTaskView).status;

/** Once per task: one completion at the provider, one metering record, no two polls of it at once. */
function assertOnce(home: string, tasks: number): void {
  const calls = scriptedCalls(home);
  assert.equal(count(calls, 'completed'), tasks, 'each task completed once at the provider');
  assert.equal(count(calls, 'metered'), tasks, 'each task metered once');
  assert.equal(count(calls, 'overlap'), 0, 'never polled by two processes at once');
}

test('a graceful restart mid-poll: the next process on the home finishes the task, once', { timeout: 60_000 }, async () => {
  const home = newHome();
  const a = await boot(home);
  const id = await submit(a.url, 'restart polls=3 delay_ms=300');
  await waitFor(() => count(scriptedCalls(home), 'poll-start') === 1, 10_000, 'the first poll');
  await a.stop(); // the poll in flight is aborted and its claim given back
  const polled = count(scriptedCalls(home), 'poll-start');
  const b = await boot(home);
  await waitFor(async () => (await status(b.url, id)) === 'completed', 20_000, 'the task to complete after the restart');
  assertOnce(home, 1);
  assert.ok(count(scriptedCalls(home), 'poll-start') > polled, 'the new process polled it');
});

test('kill -9 mid-poll: a new process takes the task over and completes it once', { timeout: 120_000 }, async () => {
  const home = newHome();
  child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'video-child.ts'), home], {
    cwd: root,
    env: process.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  let stdout = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => output.push(c.toString()));
  const url = await waitFor(() => /READY (\S+)/.exec(stdout)?.[1], 60_000, 'the child service').catch((err: Error) => {
    throw new Error(`${err.message}; exit ${child?.exitCode}; ${output.join('').slice(-2000)}`);
  });
  const id = await submit(url, 'killed polls=2 delay_ms=1500');
  await waitFor(() => count(scriptedCalls(home), 'poll-start') === 1, 10_000, 'the first poll');
  process.kill(-child.pid!, 'SIGKILL');
  await new Promise<void>((resolve) => (child!.exitCode !== null || child!.signalCode !== null ? resolve() : child!.once('exit', () => resolve())));
  const calls = scriptedCalls(home);
  assert.equal(count(calls, 'poll-end'), 0, 'killed in the middle of its poll, holding the claim');
  const b = await boot(home);
  await waitFor(async () => (await status(b.url, id)) === 'completed', 30_000, 'the task to complete in the new process');
  const after = scriptedCalls(home);
  assert.equal(count(after, 'completed'), 1, 'completed once');
  assert.equal(count(after, 'metered'), 1, 'metered once');
});

test('two processes on one home: every task is polled by one of them at a time and completes once', { timeout: 60_000 }, async () => {
  const home = newHome();
  const [a, b] = [await boot(home), await boot(home)];
  // More tasks than one process polls at once (4), so the other process takes some even on a loaded machine.
  const tasks = 10;
  const ids = [];
  for (let i = 0; i < tasks; i++) ids.push(await submit(i % 2 ? a.url : b.url, `shared ${i} polls=3 delay_ms=50`));
  for (const id of ids) await waitFor(async () => (await status(a.url, id)) === 'completed', 30_000, `task ${id}`);
  assertOnce(home, tasks);
  assert.equal(count(scriptedCalls(home), 'poll-start'), tasks * 4, 'three processing polls and the completing one per task, none repeated');
  const pollers = new Set(
    scriptedCalls(home)
      .filter((c) => c.op === 'poll-start')
      .map((c) => c.copy),
  );
  assert.equal(pollers.size, 2, 'both processes polled');
});
