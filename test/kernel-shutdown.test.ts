import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';

/** Starts the real daemon (`npm start`'s command) and resolves with its address once it listens. */
async function daemon(home: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/talon.ts'], {
    env: { ...process.env, TALON_HOME: home },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('daemon did not start')), 20_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; address?: string };
        if (entry.msg === 'talon is listening' && entry.address) {
          clearTimeout(timer);
          resolve(`http://${entry.address}`);
        }
      } catch {
        // not a log line
      }
    });
    child.once('exit', () => reject(new Error('daemon exited early')));
  });
  return { child, url, exited };
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  test(`${signal}: stops accepting, lets the in-flight request finish, exits 0`, async () => {
    const home = mkdtempSync(path.join(tmpdir(), 'talon-stop-'));
    writeFileSync(path.join(home, 'config.toml'), `api_listen = "127.0.0.1:0"\nmodule_paths = ["${path.resolve('test/fixtures/extra')}"]\n`);
    const d = await daemon(home);
    try {
      const inflight = fetch(`${d.url}/api/slow`);
      await new Promise((r) => setTimeout(r, 100));
      d.child.kill(signal);
      const res = await inflight;
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { done: true });
      assert.equal(await d.exited, 0);
      await assert.rejects(fetch(`${d.url}/api/health`), 'the port no longer accepts');
    } finally {
      d.child.kill('SIGKILL');
      rmSync(home, { recursive: true, force: true });
    }
  });
}
