/**
 * The testing kit's kernels on PostgreSQL (startTestKernel with database 'postgres'): one database per home, shared by
 * the kernels on it (started together, after a kept home, beside a kernel whose home the kit made), and a test process
 * that started kernels on a home it gives exits by itself once they stopped, taking its server with it.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { postgresMissing, startTestKernel, type TestKernel } from '@talon/testing';

const only = ['goals'];
const root = path.resolve(import.meta.dirname, '../..');

async function makeGoal(k: TestKernel, title: string): Promise<void> {
  const made = await k.request('/api/goals', { method: 'POST', json: { title } });
  assert.equal(made.status, 201, await made.text());
}
const titles = async (k: TestKernel) => ((await (await k.request('/api/goals')).json()) as { items: { title: string }[] }).items.map((g) => g.title);

/** Whether a process of this pid is running. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

describe('test kernels on PostgreSQL', { skip: postgresMissing() }, () => {
  test('two kernels started together on one home run on one database', async () => {
    const home = mkdtempSync(path.join(tmpdir(), 'talon-pg-home-'));
    const kernels: TestKernel[] = [];
    try {
      const started = await Promise.allSettled([0, 1].map(() => startTestKernel({ home, database: 'postgres', only })));
      for (const s of started) if (s.status === 'fulfilled') kernels.push(s.value);
      for (const s of started) if (s.status === 'rejected') throw s.reason;
      assert.equal(kernels[0].databaseUrl, kernels[1].databaseUrl);
      await makeGoal(kernels[0], 'together');
      assert.deepEqual(await titles(kernels[1]), ['together']);
    } finally {
      for (const k of kernels) await k.stop();
      rmSync(home, { recursive: true, force: true });
    }
  });

  test('a kernel on a home kept by keepHome finds the database of the kernel before it', async () => {
    const first = await startTestKernel({ keepHome: true, database: 'postgres', only });
    try {
      await makeGoal(first, 'kept');
    } finally {
      await first.stop();
    }
    try {
      const second = await startTestKernel({ home: first.home, database: 'postgres', only });
      try {
        assert.equal(second.databaseUrl, first.databaseUrl);
        assert.deepEqual(await titles(second), ['kept']);
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(first.home, { recursive: true, force: true });
    }
  });

  test('a second kernel on the home the kit made for a running one shares its database, dropped with the home', async () => {
    const first = await startTestKernel({ database: 'postgres', only });
    let second: TestKernel | undefined;
    try {
      second = await startTestKernel({ home: first.home, database: 'postgres', only });
      assert.equal(second.databaseUrl, first.databaseUrl);
      await makeGoal(first, 'beside');
      assert.deepEqual(await titles(second), ['beside']);
    } finally {
      await second?.stop();
      await first.stop();
    }
    // The kit removed the home at the first kernel's stop, and its database with it: a kernel on that path starts afresh.
    mkdirSync(first.home);
    const later = await startTestKernel({ home: first.home, database: 'postgres', only });
    try {
      assert.notEqual(later.databaseUrl, first.databaseUrl);
      assert.deepEqual(await titles(later), []);
    } finally {
      await later.stop();
      rmSync(first.home, { recursive: true, force: true });
    }
  });

  test('a process whose kernels ran on a home it gave exits once they stopped, and its server is stopped', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'fixtures/kernel-on-home.ts')], {
      cwd: root,
      env: { ...process.env, NODE_ENV: 'test' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    /** When it printed its result (its kernels had stopped). */
    let reported = 0;
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      if (!reported && stdout.includes('\n')) reported = Date.now();
    });
    child.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString('utf8')));
    // Generous for initdb and two kernel starts; a process held by its server never exits at all.
    const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('exit', (c, s) => resolve([c, s])));
    clearTimeout(killer);
    const pid = Number(/"pid":(\d+)/.exec(stdout)?.[1]) || undefined;
    // A process killed here leaves its server behind: stop it, so a failure costs no stray postmaster.
    if (signal && pid && alive(pid)) process.kill(pid, 'SIGQUIT');
    assert.equal(signal, null, `the process did not exit by itself (killed after 60 s)\n${stdout}\n${stderr}`);
    assert.equal(code, 0, `${stdout}\n${stderr}`);
    assert.ok(Date.now() - reported < 10_000, `the process took ${Date.now() - reported} ms to exit after its kernels stopped`);
    const result = JSON.parse(stdout.trim().split('\n').at(-1)!) as { titles: string[]; same: boolean };
    assert.deepEqual(result.titles, ['kept'], 'the restarted kernel ran on the same database');
    assert.equal(result.same, true);
    if (pid !== undefined) assert.equal(alive(pid), false, `the PostgreSQL server (pid ${pid}) outlived its process`);
  });
});
