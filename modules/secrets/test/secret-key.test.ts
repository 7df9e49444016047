/**
 * One secret key per home: created exclusively by whichever process needs it first (the others read it), taken from
 * TALON_SECRET_KEY_FILE when set, and checked at start against a value sealed in the database.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { openTestStore, startTestKernel, type TestKernel } from '@talon/testing';
import { providerKeys, type ProviderKeys } from '@talon/secrets';
import { SecretBox, secretKeyFile } from '../services/box.ts';

const moduleDir = path.resolve(import.meta.dirname, '..');
const run = promisify(execFile);

function tempDir(prefix: string): string {
  return mkdtempSync(path.join(tmpdir(), prefix));
}

test('processes starting together on one home all get the one key a single process created', async () => {
  const dir = tempDir('secrets-key-race-');
  try {
    const file = path.join(dir, 'secret.key');
    // Each child waits for the same instant, then seals: the first to need the key creates it, the rest read it.
    const at = Date.now() + 1500;
    const script = [
      `import { SecretBox } from ${JSON.stringify(pathToFileURL(path.join(moduleDir, 'services', 'box.ts')).href)};`,
      `while (Date.now() < ${at});`,
      `const box = new SecretBox(${JSON.stringify(file)});`,
      `process.stdout.write(box.seal('same key?', 'test'));`,
    ].join('\n');
    const children = Array.from({ length: 6 }, () =>
      run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: path.resolve(moduleDir, '../..'), timeout: 60_000 }),
    );
    const sealed = (await Promise.all(children)).map((c) => c.stdout);
    const box = new SecretBox(file);
    for (const value of sealed) assert.equal(box.open(value, 'test'), 'same key?', 'every process sealed with the key now in the file');
    assert.equal(statSync(file).size, 32);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(dir), ['secret.key'], 'no temporary file is left behind');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an existing key file is read, never replaced', () => {
  const dir = tempDir('secrets-key-kept-');
  try {
    const file = path.join(dir, 'secret.key');
    const key = randomBytes(32);
    writeFileSync(file, key, { mode: 0o600 });
    const sealed = new SecretBox(file).seal('v', 'o');
    assert.deepEqual(readFileSync(file), key);
    assert.equal(new SecretBox(file).open(sealed, 'o'), 'v');
    writeFileSync(file, 'short');
    assert.throws(() => new SecretBox(file).seal('v', 'o'), /is not a 32-byte key \(5 bytes\)/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('TALON_SECRET_KEY_FILE names the key file; else it is the home’s secret.key', () => {
  assert.equal(secretKeyFile('/srv/home', {}), path.join('/srv/home', 'secret.key'));
  assert.equal(secretKeyFile('/srv/home', { TALON_SECRET_KEY_FILE: '  ' }), path.join('/srv/home', 'secret.key'));
  assert.equal(secretKeyFile('/srv/home', { TALON_SECRET_KEY_FILE: '/run/secrets/talon.key' }), '/run/secrets/talon.key');
});

test('the check value: written once by the first key, opened by the same key, refused to another', async () => {
  const dir = tempDir('secrets-key-check-');
  const opened = openTestStore([moduleDir]);
  try {
    const first = new SecretBox(path.join(dir, 'a.key'));
    const second = new SecretBox(path.join(dir, 'b.key'));
    // Two processes with different keys verify at once on a fresh database: one row is written, one key wins.
    const outcomes = await Promise.allSettled([first.verify(opened.store), second.verify(opened.store)]);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['fulfilled', 'rejected'],
    );
    assert.deepEqual(await opened.store.many('SELECT id FROM secrets_key_check'), [{ id: 1 }]);
    await first.verify(opened.store);
    await new SecretBox(path.join(dir, 'a.key')).verify(opened.store);
    const refused = (outcomes[1] as PromiseRejectedResult).reason as Error;
    assert.equal(refused.name, 'ConfigError');
    assert.equal(
      refused.message.split(' (')[0],
      `the secret key ${path.join(dir, 'b.key')} does not open the values sealed in this database: it is not the key they were sealed with`,
    );
  } finally {
    opened.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

const secretsOnly = { only: ['secrets'] };

function keys(k: TestKernel): ProviderKeys {
  return k.kernel.services.view<ProviderKeys>(providerKeys.id);
}

test('start-up stops when the key is not the one the database was sealed with', async () => {
  const home = tempDir('secrets-key-home-');
  try {
    const k = await startTestKernel({ ...secretsOnly, home });
    await keys(k).set('openai', 'sk-kept');
    await k.stop();
    const keyFile = path.join(home, 'secret.key');
    writeFileSync(keyFile, randomBytes(32));
    await assert.rejects(startTestKernel({ ...secretsOnly, home }), (err: Error) => {
      assert.equal(err.name, 'ConfigError', 'a configuration error: start-up stops (exit code 2)');
      assert.match(err.message, new RegExp(`${keyFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} does not open the values sealed in this database`));
      return true;
    });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test('TALON_SECRET_KEY_FILE: the key lives there, none is made in the home, and stored keys open with it after a restart', async () => {
  const home = tempDir('secrets-key-env-');
  const dir = tempDir('secrets-key-dir-');
  const keyFile = path.join(dir, 'fleet.key');
  process.env.TALON_SECRET_KEY_FILE = keyFile;
  let k: TestKernel | undefined;
  try {
    k = await startTestKernel({ ...secretsOnly, home });
    await keys(k).set('openai', 'sk-fleet');
    assert.equal(statSync(keyFile).size, 32);
    assert.equal(existsSync(path.join(home, 'secret.key')), false);
    await k.stop();
    k = await startTestKernel({ ...secretsOnly, home });
    assert.equal(keys(k).get('openai'), 'sk-fleet');
  } finally {
    delete process.env.TALON_SECRET_KEY_FILE;
    await k?.stop();
    rmSync(home, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  }
});
