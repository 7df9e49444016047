/**
 * Stored provider keys: sealed at rest under the provider's name, effective at once in the process that set them and
 * soon in the others of the home; and the module stands on the ground floor (it needs no other module).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'smol-toml';
import { startTestKernel, waitFor, type TestKernel } from '@talon/testing';
import { providerKeys, secretVault, type ProviderKeys, type SecretVault } from '@talon/secrets';

const SECRET = 'sk-test-SECRETS-5ecret-value-0123456789';
const moduleDir = path.resolve(import.meta.dirname, '..');

const keys = (k: TestKernel) => k.kernel.services.view<ProviderKeys>(providerKeys.id);
const vault = (k: TestKernel) => k.kernel.services.view<SecretVault>(secretVault.id);

function tempHome(prefix: string): string {
  return mkdtempSync(path.join(tmpdir(), prefix));
}

test('the secrets module depends on no other module: any module can keep a secret without a product behind it', () => {
  const manifest = parse(readFileSync(path.join(moduleDir, 'module.toml'), 'utf8')) as Record<string, unknown>;
  for (const link of ['depends', 'optional_depends', 'consumes']) assert.deepEqual(manifest[link] ?? [], [], `secrets declares ${link}`);
});

test('a provider key is sealed at rest under its provider, opened again after a restart, and removed', async () => {
  const home = tempHome('secrets-keys-');
  let k = await startTestKernel({ only: ['secrets'], home });
  try {
    assert.equal(keys(k).get('openai'), undefined);
    await keys(k).set('openai', SECRET);
    assert.equal(keys(k).get('openai'), SECRET, 'effective at once');
    const row = (await k.kernel.store.one<{ ciphertext: string }>("SELECT ciphertext FROM secrets_provider_keys WHERE provider = 'openai'"))!;
    assert.ok(row.ciphertext.startsWith('v1:'));
    assert.ok(!Buffer.from(row.ciphertext.slice(3), 'base64').toString('latin1').includes(SECRET), 'no plaintext in the database');
    assert.equal(vault(k).open(row.ciphertext, 'openai'), SECRET, 'sealed by the vault under the provider name');
    assert.throws(() => vault(k).open(row.ciphertext, 'groq'), 'bound to its row: it does not open under another owner');

    await k.stop();
    k = await startTestKernel({ only: ['secrets'], home });
    assert.equal(keys(k).get('openai'), SECRET, 'the stored key survives a restart');
    assert.equal(await keys(k).delete('openai'), true);
    assert.equal(keys(k).get('openai'), undefined);
    assert.equal(await keys(k).delete('openai'), false, 'nothing stored any more');
  } finally {
    await k.stop();
    rmSync(home, { recursive: true, force: true });
  }
});

test('a stored value that no longer opens is ignored with a warning naming the provider, never its value', async () => {
  const home = tempHome('secrets-keys-bad-');
  let k = await startTestKernel({ only: ['secrets'], home });
  try {
    await keys(k).set('groq', SECRET);
    // Moved to another row: the owner binding refuses it.
    await k.kernel.store.run("UPDATE secrets_provider_keys SET provider = 'mistral' WHERE provider = 'groq'");
    await k.stop();
    k = await startTestKernel({ only: ['secrets'], home, config: 'log_level = "info"' });
    assert.equal(keys(k).get('mistral'), undefined);
    const logs = k.logLines().join('\n');
    assert.match(logs, /stored key of provider 'mistral' cannot be decrypted/);
    assert.ok(!logs.includes(SECRET));
  } finally {
    await k.stop();
    rmSync(home, { recursive: true, force: true });
  }
});

test('two processes on one home: a key set or removed in one is effective in the other', async () => {
  const home = tempHome('secrets-two-');
  const options = { only: ['secrets'], home, feedPollMs: 50 };
  const [a, b] = await Promise.all([startTestKernel(options), startTestKernel(options)]);
  try {
    await keys(a).set('openai', 'sk-shared');
    await waitFor(() => keys(b).get('openai') === 'sk-shared', 5_000, 'the key reaches the other process');
    assert.equal(await keys(b).delete('openai'), true);
    await waitFor(() => keys(a).get('openai') === undefined, 5_000, 'the removal reaches the other process');
  } finally {
    await Promise.all([a.stop(), b.stop()]);
    rmSync(home, { recursive: true, force: true });
  }
});
