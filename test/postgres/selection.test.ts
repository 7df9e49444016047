/**
 * Which database the kernel runs on (no server needed): SQLite unless a URL names a PostgreSQL server; a bad URL stops
 * start-up naming where it came from; a password in config.toml is refused.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestKernel } from '@talon/testing';
import { chooseDatabase, shownUrl } from '../../kernel/db.ts';

test('no URL anywhere: SQLite; the first URL of the embedder, TALON_DATABASE_URL, database.url wins', () => {
  assert.deepEqual(
    chooseDatabase([
      ['TALON_DATABASE_URL', undefined],
      ['database.url', '  '],
    ]),
    { engine: 'sqlite' },
  );
  assert.deepEqual(
    chooseDatabase([
      ['TALON_DATABASE_URL', 'postgresql://u:p@db:5432/talon'],
      ['database.url', 'postgres://other@db/x'],
    ]),
    { engine: 'postgres', url: 'postgresql://u:p@db:5432/talon', source: 'TALON_DATABASE_URL' },
  );
  assert.equal(shownUrl('postgres://u:secret@db:5432/talon'), 'postgres://u@db:5432/talon');
});

test('a URL that is not a PostgreSQL one is refused, naming where it came from', () => {
  for (const bad of ['mysql://db/x', 'not a url', 'postgres://']) {
    assert.throws(
      () => chooseDatabase([['TALON_DATABASE_URL', bad]]),
      (err: Error) => err.name === 'ConfigError' && /invalid value for 'TALON_DATABASE_URL': not a PostgreSQL URL/.test(err.message),
      bad,
    );
  }
});

test('database.url: a bad value stops start-up naming the key; a password in the file is refused', async () => {
  await assert.rejects(startTestKernel({ only: [], database: 'sqlite', config: '[database]\nurl = "mysql://db/x"\n' }), (err: Error) => {
    assert.equal(err.name, 'ConfigError');
    assert.match(err.message, /invalid value for 'database.url': must be a PostgreSQL URL/);
    return true;
  });
  await assert.rejects(startTestKernel({ only: [], database: 'sqlite', config: '[database]\nurl = "postgres://talon:pw@127.0.0.1:1/x"\n' }), (err: Error) => {
    assert.equal(err.name, 'ConfigError');
    assert.match(err.message, /'database.url': it holds a password; set TALON_DATABASE_URL instead, or the password in PGPASSWORD/);
    return true;
  });
});

test('without a URL the kernel runs on SQLite, as before', async () => {
  const k = await startTestKernel({ only: [], database: 'sqlite' });
  try {
    assert.equal(k.kernel.store.dialect, 'sqlite');
    assert.equal(k.databaseUrl, undefined);
  } finally {
    await k.stop();
  }
});
