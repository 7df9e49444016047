import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { openPostgresTestStore, openTestStore } from '@talon/testing';
import type { Store } from '@talon/module-sdk';
import type { SecretVault } from '@talon/secrets';
import { LOCKOUT_SECONDS, MAX_FAILURES, Totp } from '../services/totp.ts';
import { code } from './helpers.ts';

/** TALON_TEST_DB=postgres: each test's store is a fresh PostgreSQL database (a second "process" shares its pool). */
const onPostgres = process.env.TALON_TEST_DB === 'postgres';
const opened: Array<{ store: Store; file?: string; close(): unknown }> = [];
after(() => Promise.all(opened.map((o) => o.close())));

/** A vault that only wraps, to see that the secret is stored sealed and opened with the right owner. */
const vault: SecretVault = {
  seal: (plain, owner) => `sealed(${owner}):${Buffer.from(plain).toString('base64')}`,
  open: (sealed, owner) => {
    const prefix = `sealed(${owner}):`;
    if (!sealed.startsWith(prefix)) throw new Error('wrong owner');
    return Buffer.from(sealed.slice(prefix.length), 'base64').toString();
  },
};

async function fresh() {
  const dir = path.resolve(import.meta.dirname, '..');
  const o = onPostgres ? await openPostgresTestStore([dir]) : openTestStore([dir]);
  opened.push(o);
  return {
    store: o.store,
    totp: new Totp(
      o.store,
      () => vault,
      () => 'Test',
    ),
  };
}

describe('approvals: TOTP rules', () => {
  test('the secret is stored sealed, recovery codes only as hashes', async () => {
    const { store, totp } = await fresh();
    const s = await totp.setup(undefined);
    const row = (await store.one<{ secret: string; recovery_hashes: string }>('SELECT secret, recovery_hashes FROM approvals_totp'))!;
    assert.ok(row.secret.startsWith('sealed(approvals:totp):'));
    assert.ok(!row.recovery_hashes.includes(s.recovery_codes[0]));
  });

  test('a recovery code works once', async () => {
    const { totp } = await fresh();
    const s = await totp.setup(undefined);
    await totp.confirm(await code(s.secret));
    const replaced = await totp.setup(s.recovery_codes[0]);
    await totp.confirm(await code(replaced.secret, 1));
    await assert.rejects(totp.setup(s.recovery_codes[0]), /invalid TOTP or recovery code/, 'codes of the old enrollment are gone');
    await totp.revoke(replaced.recovery_codes[1]);
    assert.equal((await totp.status(false)).enrolled, false);
  });

  test(`${MAX_FAILURES} failures, whatever their purpose, lock the second factor for ${LOCKOUT_SECONDS} s, even for a valid code`, async () => {
    const { store, totp } = await fresh();
    const s = await totp.setup(undefined);
    await totp.confirm(await code(s.secret));
    const locked = (err: Error & { statusCode?: number }) => err.statusCode === 429;
    for (let i = 0; i < MAX_FAILURES - 2; i++) await assert.rejects(totp.verifyForApproval('000000'), /invalid/);
    await assert.rejects(totp.revoke('wrong-recovery-code'), /invalid/);
    await assert.rejects(totp.setup('000000'), /invalid/);
    await assert.rejects(totp.verifyForApproval(await code(s.secret, 1)), locked);
    await assert.rejects(totp.revoke(s.recovery_codes[0]), locked, 'a recovery code does not get around the lockout');
    const row = (await store.one<{ locked_until: number }>('SELECT locked_until FROM approvals_totp_failures'))!;
    assert.ok(row.locked_until - Date.now() > (LOCKOUT_SECONDS - 5) * 1000);
    assert.equal((await totp.status(false)).remaining_recovery_codes, 8, 'the refused recovery code was not used up');
  });

  test('a success clears the count', async () => {
    const { totp } = await fresh();
    const s = await totp.setup(undefined);
    await totp.confirm(await code(s.secret));
    for (let i = 0; i < MAX_FAILURES - 1; i++) await assert.rejects(totp.verifyForApproval('000000'), /invalid/);
    await totp.verifyForApproval(await code(s.secret, 1));
    for (let i = 0; i < MAX_FAILURES - 1; i++) await assert.rejects(totp.verifyForApproval('000000'), /invalid/);
    await totp.revoke(s.recovery_codes[0]);
  });

  test('failures made at the same moment (several processes) all count', async () => {
    const { store, totp } = await fresh();
    const s = await totp.setup(undefined);
    await totp.confirm(await code(s.secret));
    const others = [0, 1, 2, 3].map(
      () =>
        new Totp(
          store,
          () => vault,
          () => 'Test',
        ),
    );
    const copies = [totp, ...others];
    await Promise.all(copies.map((c) => assert.rejects(c.verifyForApproval('000000'), /invalid/)));
    const row = (await store.one<{ failures: number; locked_until: number }>('SELECT failures, locked_until FROM approvals_totp_failures'))!;
    assert.equal(row.locked_until > 0 ? MAX_FAILURES : row.failures, Math.min(copies.length, MAX_FAILURES));
  });

  test('a recovery code used by two processes at once passes once', async () => {
    const first = await fresh();
    const s = await first.totp.setup(undefined);
    await first.totp.confirm(await code(s.secret));
    // Another process (a second connection on the file; on PostgreSQL the pool's) read the recovery codes, then this
    // one used one of them.
    const other = onPostgres ? { store: first.store, close: () => undefined } : openTestStore([], opened.at(-1)!.file!);
    opened.push(other);
    const second = new Totp(
      other.store,
      () => vault,
      () => 'Test',
    );
    const read = (await second['enrollment']())!;
    await first.totp.setup(s.recovery_codes[2]);
    assert.equal(await second['useRecoveryCode'](read, s.recovery_codes[2]), false, 'the code was spent after it was read');
    assert.equal((await first.totp.status(false)).remaining_recovery_codes, 8, "the new enrollment's codes are intact");
  });

  test('a code is refused once its step (or a later one) was accepted', async () => {
    const { totp } = await fresh();
    const s = await totp.setup(undefined);
    await totp.confirm(await code(s.secret, 1));
    await assert.rejects(totp.verifyForApproval(await code(s.secret, 0)), /already used/);
    await assert.rejects(totp.verifyForApproval(await code(s.secret, 1)), /already used/);
  });
});
