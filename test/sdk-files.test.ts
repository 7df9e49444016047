/** readOrCreateOnce: a file (an identity key) made by whichever of several processes starting together comes first. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readOrCreateOnce } from '@talon/module-sdk';

test('a second writer gets the first one’s content, and no temporary file is left', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'talon-once-'));
  try {
    const file = path.join(dir, 'node_ed25519.pem');
    assert.equal(
      readOrCreateOnce(file, () => 'first key'),
      'first key',
    );
    assert.equal(
      readOrCreateOnce(file, () => assert.fail('an existing file is read, nothing is made')),
      'first key',
    );
    assert.equal(readFileSync(file, 'utf8'), 'first key');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(dir), ['node_ed25519.pem']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the process that lost the race (it found no file, another linked one first) reads the winner’s, not EEXIST', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'talon-once-'));
  try {
    const file = path.join(dir, 'identity.pem');
    // The winner writes while the loser is making its content.
    assert.equal(
      readOrCreateOnce(file, () => {
        writeFileSync(file, 'winner');
        return 'loser';
      }),
      'winner',
    );
    assert.deepEqual(readdirSync(dir), ['identity.pem']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
