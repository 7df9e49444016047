/**
 * A reset of the change feed (the key '': this process may have missed notes) makes the sessions read every session
 * again: one begun, and one ended, by another process whose notes never arrived (on the engine TALON_TEST_DB names).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { openTestDbStore, type PostgresTestStore, type TestStore } from '@talon/testing';
import type { SecretVault } from '@talon/secrets';
import type { OidcConfig } from '../config.ts';
import { Sessions } from '../services/sessions.ts';

let db: TestStore | PostgresTestStore;
before(async () => void (db = await openTestDbStore([path.resolve(import.meta.dirname, '..')])));
after(async () => db?.close());

test("heard(''): sessions begun and ended elsewhere while notes were missed are taken as stored", async () => {
  const config = () => ({ session_ttl_secs: 3600 }) as OidcConfig;
  const vault = (): SecretVault => {
    throw new Error('no access token here');
  };
  // Two copies of the module on one database; the notes between them are lost.
  const here = new Sessions(db.store, config, vault, async () => undefined);
  const there = new Sessions(db.store, config, vault, async () => undefined);
  await Promise.all([here.load(), there.load()]);
  const { token } = await there.create('test', { sub: 'u1', email: null, email_verified: null, name: null, picture: null }, undefined);
  assert.equal(here.get(token), undefined, 'not heard of yet');
  await here.heard('');
  assert.equal(here.get(token)?.profile.sub, 'u1');
  assert.equal(await there.end(token), true);
  await here.heard('');
  assert.equal(here.get(token), undefined, 'its end heard too');
});
