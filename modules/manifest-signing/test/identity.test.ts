/** The node identity file when several processes of one home start together: written once, whole, and shared. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { storeOnce } from '../services/identity.ts';

test('a second writer of the identity file gets the first one’s key, and no temporary file is left', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'talon-identity-'));
  try {
    const file = path.join(dir, 'node_ed25519.pem');
    assert.equal(storeOnce(file, 'first key'), 'first key');
    // The process that lost the race (its existsSync saw no file) must not fail with EEXIST or replace the key.
    assert.equal(storeOnce(file, 'second key'), 'first key');
    assert.equal(readFileSync(file, 'utf8'), 'first key');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(dir), ['node_ed25519.pem']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
