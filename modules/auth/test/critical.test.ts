/** auth is a security module (critical): it never fails open. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestKernel, type TestKernel } from '@talon/testing';

const root = path.resolve(import.meta.dirname, '../../..');
const brokenGuard = path.join(import.meta.dirname, 'fixtures', 'broken-guard');
const disableAuth = (extra = '') => `[modules]\ndisabled = ["auth"]\n${extra}`;

/** Boots every built-in module: `only` would bypass [modules] disabled. */
async function withKernel(config: string, check: (k: TestKernel) => Promise<void>): Promise<void> {
  const k = await startTestKernel({ config });
  try {
    await check(k);
  } finally {
    await k.stop();
  }
}

test('with api_key set, disabling auth stops start-up with a configuration error naming auth and api_key', async () => {
  await assert.rejects(
    startTestKernel({ config: `api_key = "s3cret-key-0123456789"\n${disableAuth()}` }),
    (err: Error) =>
      err.name === 'ConfigError' && /'auth', a security module, and while 'api_key' is set/.test(err.message) && /allow_disable_critical/.test(err.message),
  );
});

test('[modules] allow_disable_critical lets auth be disabled with api_key set: the API is then open', async () => {
  await withKernel(`api_key = "s3cret-key-0123456789"\n${disableAuth('allow_disable_critical = ["auth"]\n')}`, async (k) => {
    assert.equal(k.kernel.modules().find((m) => m.id === 'auth')?.state, 'disabled');
    assert.equal((await k.request('/api/status')).status, 200);
  });
});

test('without api_key, auth may be disabled', async () => {
  await withKernel(disableAuth(), async (k) => {
    assert.equal(k.kernel.modules().find((m) => m.id === 'auth')?.state, 'disabled');
    assert.equal((await k.request('/api/status')).status, 200);
  });
});

test('a security module that fails at boot stops start-up, naming it', async () => {
  await assert.rejects(
    startTestKernel({
      only: ['auth', 'system', 'broken-guard'],
      config: `api_key = "s3cret-key-0123456789"\nmodule_paths = [${JSON.stringify(brokenGuard)}]\n`,
    }),
    (err: Error) => err.name === 'BootAbort' && /security module 'broken-guard' failed to start: guard backend unreachable/.test(err.message),
  );
});

test('the service (bin/talon.ts) refuses to start with auth disabled and api_key set: exit code 2, the conflict on stderr', async () => {
  const home = mkdtempSync(path.join(tmpdir(), 'talon-auth-cli-'));
  writeFileSync(path.join(home, 'config.toml'), `api_listen = "127.0.0.1:0"\napi_key = "s3cret-key-0123456789"\n${disableAuth()}`);
  // Its own process group, so a hung service can be killed with everything it started.
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/talon.ts'], {
    cwd: root,
    env: { ...process.env, TALON_HOME: home },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d));
  child.stdout.resume();
  const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 30_000);
  try {
    const [code, signal] = (await new Promise((resolve) => child.once('exit', (...r) => resolve(r)))) as [number | null, string | null];
    assert.equal(signal, null, 'the service did not exit within 30 s');
    assert.equal(code, 2, stderr);
    assert.match(stderr, /configuration error: .*\[modules\] disabled lists 'auth', a security module, and while 'api_key' is set/);
  } finally {
    clearTimeout(timer);
    rmSync(home, { recursive: true, force: true });
  }
});
