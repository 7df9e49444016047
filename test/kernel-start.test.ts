import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { waitFor } from '@talon/testing';

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

/** Runs `command` in its own process group with a fresh home; always stops it (the whole group). */
async function withService(command: string[], check: (url: string, output: () => string, child: ChildProcess) => Promise<void>): Promise<void> {
  const home = mkdtempSync(path.join(tmpdir(), 'talon-start-'));
  const port = await freePort();
  writeFileSync(path.join(home, 'config.toml'), `api_listen = "127.0.0.1:${port}"\n`);
  const child = spawn(command[0], command.slice(1), { env: { ...process.env, TALON_HOME: home }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d));
  child.stderr!.on('data', (d: Buffer) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/api/health`).catch(() => undefined))?.status === 200, 60_000, 'the service to answer');
    await check(`http://127.0.0.1:${port}`, () => output, child);
  } finally {
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      // already gone
    }
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
    rmSync(home, { recursive: true, force: true });
  }
}

test('npm start runs the daemon from its CommonJS build (no TypeScript loader) and stops on SIGTERM', async () => {
  await withService([process.execPath, 'scripts/start.mjs'], async (url) => {
    assert.ok(existsSync('node_modules/.cache/talon/main.cjs'), 'the build npm ci prepared (or start.mjs refreshed)');
    const status = (await (await fetch(`${url}/api/modules`)).json()) as { modules: Array<{ id: string; state: string }> };
    assert.ok(status.modules.some((m) => m.id === 'system' && m.state === 'running'));
  });
});

test('on a terminal the log lines are readable; otherwise they are JSON', async () => {
  // script(1) gives the service a pseudo-terminal for stdout.
  await withService(['script', '-qfec', `${process.execPath} scripts/start.mjs`, '/dev/null'], async (_url, output) => {
    await waitFor(() => output().includes('talon is listening'), 10_000, 'the listening line');
    assert.match(output(), /INFO.*talon is listening/);
    assert.doesNotMatch(output(), /"level":30/);
  });
  await withService([process.execPath, 'scripts/start.mjs'], async (_url, output) => {
    await waitFor(() => output().includes('talon is listening'), 10_000, 'the listening line');
    assert.match(output(), /\{"level":30,.*"msg":"talon is listening"\}/);
  });
});
