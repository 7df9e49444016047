import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NonceLedger } from '../services/connection.ts';

test('a handshake nonce is accepted once', () => {
  const ledger = new NonceLedger();
  const nonce = 'ab'.repeat(32);
  assert.equal(ledger.use(nonce), true);
  assert.equal(ledger.use(nonce), false);
  assert.equal(ledger.use('cd'.repeat(32)), true);
});
