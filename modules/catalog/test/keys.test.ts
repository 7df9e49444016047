/**
 * Provider keys are the secrets module's since issue 25: the catalog's key routes store them there, a home made
 * before the move keeps its keys and its key check (the catalog's migration 0003 hands them over), and the layers the
 * catalog still keeps follow the other processes of the home.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { startTestKernel, waitFor } from '@talon/testing';
import { service } from './helpers.ts';

const catalogOnly = { only: ['catalog'] };
/** The two tests of a home made before the move build that home in its SQLite file; a PostgreSQL database never was one. */
const oldSqliteHome = { skip: process.env.TALON_TEST_DB === 'postgres' && 'a home from before the move is a SQLite file' };
const migrations = path.resolve(import.meta.dirname, '..', 'migrations');

function tempDir(prefix: string): string {
  return mkdtempSync(path.join(tmpdir(), prefix));
}

/**
 * Puts a home's database back into its shape before the secrets module: the sealed rows in the catalog's tables (as
 * its migrations 0001 and 0002 made them), no secrets tables, neither the secrets module's migration nor the
 * hand-over in the ledger. The rows themselves are what the vault wrote, which is what the catalog wrote then (same
 * key file, same owners). Reaching into the tables is the point here: it builds the old home.
 */
function rewindToBeforeTheMove(home: string): void {
  const db = new Database(path.join(home, 'talon.db'));
  try {
    const providerKeysTable = readFileSync(path.join(migrations, '0001_catalog.sql'), 'utf8').match(/CREATE TABLE catalog_provider_keys \([^;]*\);/)![0];
    db.exec(providerKeysTable);
    db.exec(readFileSync(path.join(migrations, '0002_key_check.sql'), 'utf8'));
    db.exec(`INSERT INTO catalog_provider_keys SELECT provider, ciphertext, updated_at FROM secrets_provider_keys;
      INSERT INTO catalog_key_check SELECT id, sealed, created_at FROM secrets_key_check;
      DROP TABLE secrets_provider_keys; DROP TABLE secrets_key_check;
      DELETE FROM kernel_migrations WHERE module = 'secrets' OR (module = 'catalog' AND id = '0003_keys_to_secrets');`);
  } finally {
    db.close();
  }
}

function tables(home: string): string[] {
  const db = new Database(path.join(home, 'talon.db'), { readonly: true });
  try {
    return db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '%key%' ORDER BY name").pluck().all() as string[];
  } finally {
    db.close();
  }
}

test('a home made before the secrets module keeps its provider keys: the catalog hands its rows over once', oldSqliteHome, async () => {
  const home = tempDir('catalog-keys-old-home-');
  try {
    let k = await startTestKernel({ ...catalogOnly, home });
    assert.equal((await k.request('/api/providers/openai/key', { method: 'POST', json: { api_key: 'sk-from-before' } })).status, 200);
    await k.stop();
    rewindToBeforeTheMove(home);
    assert.deepEqual(tables(home), ['catalog_key_check', 'catalog_provider_keys'], 'the old home has only the catalog tables');

    k = await startTestKernel({ ...catalogOnly, home });
    try {
      assert.equal(service(k).apiKey('openai'), 'sk-from-before', 'the key stored before the move opens');
      assert.equal((await k.request('/api/providers/openai')).status, 200);
      assert.equal(((await (await k.request('/api/providers/openai')).json()) as { auth_status: string }).auth_status, 'configured');
    } finally {
      await k.stop();
    }
    assert.deepEqual(tables(home), ['secrets_key_check', 'secrets_provider_keys'], 'the catalog tables are gone: no stale sealed copy stays');
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test('the key check of a home made before the move still refuses another key', oldSqliteHome, async () => {
  const home = tempDir('catalog-keys-old-check-');
  try {
    const k = await startTestKernel({ ...catalogOnly, home });
    await k.stop();
    rewindToBeforeTheMove(home);
    const keyFile = path.join(home, 'secret.key');
    writeFileSync(keyFile, randomBytes(32));
    // Were the old check value not handed over, the secrets module would write a new one with this key and accept it.
    // A kernel that starts anyway is stopped, so that the failure is reported instead of hanging the run.
    const err = await startTestKernel({ ...catalogOnly, home }).then(
      (k) => k.stop().then(() => new Error('the service started')),
      (e: Error) => e,
    );
    assert.equal(err.name, 'ConfigError', err.message);
    assert.ok(err.message.includes(`the secret key ${keyFile} does not open the values sealed in this database`), err.message);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test('two processes on one home: a key, an alias or a URL changed in one is effective in the other', async () => {
  const home = tempDir('catalog-two-');
  const options = { ...catalogOnly, home, feedPollMs: 50 };
  const [a, b] = await Promise.all([startTestKernel(options), startTestKernel(options)]);
  try {
    assert.equal((await a.request('/api/providers/openai/key', { method: 'POST', json: { api_key: 'sk-shared' } })).status, 200);
    await waitFor(() => service(b).apiKey('openai') === 'sk-shared', 5_000, 'the key reaches the other process');
    assert.equal((await a.request('/api/models/aliases', { method: 'POST', json: { alias: 'house', model_id: 'gpt-4o-mini' } })).status, 201);
    await waitFor(() => service(b).resolveAlias('house') === 'gpt-4o-mini', 5_000, 'the alias reaches the other process');
    assert.equal((await b.request('/api/providers/groq/url', { method: 'PUT', json: { url: 'http://127.0.0.1:9/groq' } })).status, 200);
    await waitFor(() => service(a).baseUrl('groq') === 'http://127.0.0.1:9/groq', 5_000, 'the URL reaches the other process');
    assert.equal((await b.request('/api/providers/openai/key', { method: 'DELETE' })).status, 200);
    await waitFor(() => service(a).apiKey('openai') === undefined, 5_000, 'the removal reaches the other process');
  } finally {
    await Promise.all([a.stop(), b.stop()]);
    rmSync(home, { recursive: true, force: true });
  }
});
