/**
 * Backup and restore of the database on PostgreSQL (a real server): every table exported in one snapshot, restored in
 * one transaction. Rows of several modules come back through their APIs, the audit trail is kept, a SQLite archive
 * is converted (one machine moving onto a fleet) and so is a PostgreSQL archive on SQLite (a fleet back onto one
 * machine); one of another schema, or with a row referring to one it does not hold, is refused, naming why. The values modules' APIs do not reach (BYTEA byte for
 * byte, BIGINT past 2^53, arrays, bit strings, a table restored before the one it refers to, a GENERATED ALWAYS
 * identity) are in tables of the test's own: the export takes every table of the schema, whoever made it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { FakeProvider, postgresMissing, waitFor, type AgentTestKernel } from '@talon/testing';
import { auth, call, start } from './env.ts';

const skip = postgresMissing();
let k: AgentTestKernel;

before(async () => {
  if (!skip) k = await start({ modules: ['scheduler'], database: 'postgres' });
});
after(async () => {
  await k?.stop();
});

const manifest = (name: string) => `name = "${name}"\n[model]\nprovider = "default"\nmodel = "default"\n`;
/** Every byte value, NUL first: what a text round trip would spoil. */
const VECTOR = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

/** Rows the API of no module writes: made by the test, with the types and keys a restore must get right. */
const PROBE = `
  CREATE TABLE test_blobs (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    parent BIGINT REFERENCES test_blobs (id),
    data BYTEA, bits BIT VARYING, big BIGINT, tags TEXT[], at TIMESTAMPTZ,
    doubled BIGINT GENERATED ALWAYS AS (id * 2) STORED
  );
  -- Before test_blobs in the archive, and referring to it.
  CREATE TABLE test_a_refs (blob BIGINT NOT NULL REFERENCES test_blobs (id));
  INSERT INTO test_blobs (data, bits, big, tags, at) VALUES (NULL, B'10110', 9007199254740993, '{a,"b c",NULL}', '2026-01-02 03:04:05.678901+00');
  INSERT INTO test_a_refs (blob) VALUES (1);
  -- A table referring to itself.
  INSERT INTO test_blobs (parent) VALUES (1);`;

const probeRows = () =>
  k.kernel.store.many<Record<string, unknown>>(
    'SELECT id, parent, data, bits::text AS bits, big::text AS big, tags::text AS tags, at::text AS at, doubled FROM test_blobs ORDER BY id',
  );

interface Made {
  filename: string;
  components: string[];
}
interface Restored {
  status: string;
  components: string[];
  modules_restarted: string[];
  warnings: string[];
  manifest: { database?: { engine: string; tables: Array<{ name: string; file: string; rows: number }> } };
}

async function state(agentId: string) {
  const agents = (await call<Array<{ id: string; name: string }>>(k, '/api/agents')).body;
  const store = k.kernel.store;
  return {
    agents: agents.map((a) => [a.id, a.name]).sort(),
    session: (await call(k, `/api/agents/${agentId}/session`)).body,
    kv: (await call(k, `/api/memory/agents/${agentId}/kv`)).body,
    memory: (await call(k, '/api/memory?limit=100')).body,
    schedules: (await call(k, '/api/schedules')).body,
    probe: await probeRows(),
    refs: await store.many('SELECT blob FROM test_a_refs'),
  };
}

test('round trip on PostgreSQL: several modules’ rows, BYTEA and identities come back; the audit trail stays', { skip, timeout: 120_000 }, async () => {
  const spawned = await call<{ agent_id: string }>(k, '/api/agents', { method: 'POST', json: { manifest_toml: manifest('keeper') } });
  assert.equal(spawned.status, 201);
  const id = spawned.body.agent_id;
  k.fake.enqueue({ text: 'remembered' });
  assert.equal((await call(k, `/api/agents/${id}/message`, { method: 'POST', json: { message: 'hello there' } })).status, 200);
  assert.equal((await call(k, `/api/memory/agents/${id}/kv/colour`, { method: 'PUT', json: { value: 'teal' } })).status, 200);
  const entry = await call<{ id: string }>(k, '/api/memory', { method: 'POST', json: { content: 'the user likes green tea', agent_id: id } });
  assert.equal(entry.status, 201);
  const job = { agent_id: id, cron: '0 9 * * 1-5', tz: 'Europe/Paris', prompt: 'Weekday briefing' };
  const scheduled = await call<{ id: string }>(k, '/api/schedules', { method: 'POST', json: job });
  assert.equal(scheduled.status, 201);
  const store = k.kernel.store;
  await store.exec(PROBE);
  await store.run('UPDATE test_blobs SET data = ? WHERE id = 1', [VECTOR]);
  const before = await state(id);

  const made = await call<Made>(k, '/api/backup', { method: 'POST' });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  assert.ok(made.body.components.includes('database'));
  const tar = gunzipSync(readFileSync(path.join(k.home, 'backups', made.body.filename)));
  for (const table of ['agents_agents', 'memory_entries', 'scheduler_jobs', 'test_blobs', 'kernel_migrations', 'audit_entries'])
    assert.ok(tar.includes(Buffer.from(`database/tables/${table}.jsonl`)), `the archive holds ${table}`);

  // Change the rows of every module involved.
  assert.equal((await call(k, `/api/agents/${id}`, { method: 'DELETE' })).status, 200);
  assert.equal((await call(k, '/api/agents', { method: 'POST', json: { manifest_toml: manifest('intruder') } })).status, 201);
  assert.equal((await call(k, '/api/memory', { method: 'POST', json: { content: 'written after the backup' } })).status, 201);
  assert.equal((await call(k, `/api/schedules/${scheduled.body.id}`, { method: 'DELETE' })).status, 200);
  await store.exec('DELETE FROM test_a_refs; DELETE FROM test_blobs WHERE id = 2; UPDATE test_blobs SET data = NULL, big = 0');
  assert.notDeepEqual(await state(id), before);

  const restored = await call<Restored>(k, '/api/restore', { method: 'POST', json: { filename: made.body.filename } });
  assert.equal(restored.status, 200, JSON.stringify(restored.body));
  assert.equal(restored.body.status, 'restored');
  assert.ok(restored.body.modules_restarted.includes('agents'));
  const tables = restored.body.manifest.database?.tables ?? [];
  assert.equal(restored.body.manifest.database?.engine, 'postgres');
  assert.equal(tables.find((t) => t.name === 'test_blobs')?.rows, 2);
  assert.equal(tables.find((t) => t.name === 'test_a_refs')?.rows, 1);
  assert.ok(
    tables.some((t) => t.name === 'kernel_nodes'),
    'every table of the schema is listed',
  );

  const after = await state(id);
  assert.deepEqual(after, before);
  assert.deepEqual(after.probe[0].data, VECTOR);
  assert.equal(after.probe[0].big, '9007199254740993');
  // The generated search column was computed again from the restored text.
  const found = await call<{ results: Array<{ id: string }> }>(k, '/api/memory/search?q=tea');
  assert.ok(
    found.body.results.some((r) => r.id === entry.body.id),
    JSON.stringify(found.body),
  );
  // Identities go on after the restored values: without that, the next insert would collide with a restored row.
  const next = await call<{ id: string }>(k, '/api/memory', { method: 'POST', json: { content: 'after the restore', agent_id: id } });
  assert.equal(next.status, 201, JSON.stringify(next.body));
  assert.deepEqual(await store.many('INSERT INTO test_blobs (parent) VALUES (2) RETURNING id'), [{ id: 3 }]);
  k.fake.enqueue({ text: 'still here' });
  assert.equal((await call(k, `/api/agents/${id}/message`, { method: 'POST', json: { message: 'again' } })).status, 200);

  // The audit trail is not rolled back: it holds the restore and verifies.
  const audit = await call<{ entries: Array<{ event_type: string }> }>(k, '/api/audit/recent?limit=500');
  assert.ok(audit.body.entries.some((e) => e.event_type === 'backup_restored'));
  assert.equal((await call<{ status: string }>(k, '/api/audit/verify')).body.status, 'valid');
});

test('an archive of another schema version is refused (409) and changes nothing', { skip, timeout: 30_000 }, async () => {
  const made = await call<Made>(k, '/api/backup', { method: 'POST', json: { components: ['database'] } });
  assert.equal(made.status, 201);
  const store = k.kernel.store;
  const agents = async () => (await call<unknown[]>(k, '/api/agents')).body.length;
  // This database now says agents has one migration more than the archive.
  await store.run("INSERT INTO kernel_migrations (module, id, checksum, applied_at, dialect) VALUES ('agents', '9999_later', 'x', 'now', 'postgres')");
  try {
    assert.equal((await call(k, '/api/agents', { method: 'POST', json: { manifest_toml: manifest('after') } })).status, 201);
    const count = await agents();
    const refused = await call<{ error: string }>(k, '/api/restore', { method: 'POST', json: { filename: made.body.filename } });
    assert.equal(refused.status, 409, JSON.stringify(refused.body));
    assert.match(refused.body.error, /another schema version \(agents: .* in the backup, 9999_later here\)/);
    assert.equal(await agents(), count, 'nothing was restored');
  } finally {
    await store.run("DELETE FROM kernel_migrations WHERE module = 'agents' AND id = '9999_later'");
  }
});

/** What the modules' APIs answer about one agent and the rest of the service. */
async function apiState(kernel: AgentTestKernel, agentId: string) {
  return {
    agents: (await call<Array<{ id: string; name: string }>>(kernel, '/api/agents')).body.map((a) => [a.id, a.name]).sort(),
    session: (await call(kernel, `/api/agents/${agentId}/session`)).body,
    kv: (await call(kernel, `/api/memory/agents/${agentId}/kv`)).body,
    memory: (await call(kernel, '/api/memory?limit=100')).body,
    schedules: (await call(kernel, '/api/schedules')).body,
  };
}

/** The memory settings that embed on the fake provider. */
const embeddingsOn = (fake: FakeProvider) => `[memory]\nembedding_provider = "${fake.url}/v1"\nembedding_model = "fake-embed"\n`;
const embedded = async (kernel: AgentTestKernel) => (await call<{ embedded: number }>(kernel, '/api/memory/stats')).body.embedded;

/** One agent's state through several modules' APIs (a turn, a key, an embedded memory, a schedule, an upload). */
async function seed(kernel: AgentTestKernel, fake: FakeProvider, words: { name: string; memory: string; tz: string }) {
  const id = (await call<{ agent_id: string }>(kernel, '/api/agents', { method: 'POST', json: { manifest_toml: manifest(words.name) } })).body.agent_id;
  fake.enqueue({ text: `noted by ${words.name}` });
  assert.equal((await call(kernel, `/api/agents/${id}/message`, { method: 'POST', json: { message: 'before the move' } })).status, 200);
  assert.equal((await call(kernel, `/api/memory/agents/${id}/kv/colour`, { method: 'PUT', json: { value: words.name } })).status, 200);
  const entry = await call<{ id: string }>(kernel, '/api/memory', { method: 'POST', json: { content: words.memory, agent_id: id } });
  assert.equal(entry.status, 201);
  const job = { agent_id: id, cron: '30 7 * * *', tz: words.tz, prompt: 'Morning summary' };
  assert.equal((await call(kernel, '/api/schedules', { method: 'POST', json: job })).status, 201);
  const form = new FormData();
  form.append('file', new Blob([VECTOR]), 'bytes.bin');
  const uploaded = (await (await kernel.request(`/api/agents/${id}/upload`, { method: 'POST', headers: auth, body: form })).json()) as { file_id: string };
  await waitFor(async () => ((await embedded(kernel)) === 1 ? true : undefined), 5000, 'the memory entry embedded');
  return { id, entryId: entry.body.id, fileId: uploaded.file_id };
}

/** What seed made, found on the kernel it was restored on: the upload served, the memory found, its vector kept. */
async function assertMoved(kernel: AgentTestKernel, seeded: { entryId: string; fileId: string }, word: string) {
  const served = await kernel.request(`/api/uploads/${seeded.fileId}`, { headers: auth });
  assert.equal(served.status, 200, 'an upload of the old home is served from the new data directory');
  assert.deepEqual(Buffer.from(await served.arrayBuffer()), VECTOR);
  const found = await call<{ results: Array<{ id: string }> }>(kernel, `/api/memory/search?q=${word}`);
  assert.ok(
    found.body.results.some((r) => r.id === seeded.entryId),
    JSON.stringify(found.body),
  );
  // The vector came too (each engine's quantised form is filled in at memory's start: modules/memory/test/quantized-fill).
  assert.equal(await embedded(kernel), 1);
}

test('a SQLite archive restores on PostgreSQL (one machine moving onto a fleet): rows, uploads and search come back', { skip, timeout: 120_000 }, async () => {
  const fake = new FakeProvider();
  await fake.start();
  const lite = await start({ database: 'sqlite', modules: ['scheduler'], fake, extra: embeddingsOn(fake) });
  try {
    const seeded = await seed(lite, fake, { name: 'mover', memory: 'the user drinks oolong tea', tz: 'Europe/Berlin' });
    const id = seeded.id;
    const before = await apiState(lite, id);
    const made = await call<Made>(lite, '/api/backup', { method: 'POST' });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    copyFileSync(path.join(lite.home, 'backups', made.body.filename), path.join(k.home, 'backups', made.body.filename));

    const restored = await call<Restored>(k, '/api/restore', { method: 'POST', json: { filename: made.body.filename } });
    assert.equal(restored.status, 200, JSON.stringify(restored.body));
    assert.equal(restored.body.manifest.database?.engine, 'sqlite', "the archive's own manifest");
    assert.ok(
      !restored.body.warnings.some((w) => /memory_fts|memory_vec/.test(w)),
      `SQLite's own tables are left out quietly: ${restored.body.warnings.join('; ')}`,
    );
    assert.deepEqual(await apiState(k, id), before);
    await assertMoved(k, seeded, 'oolong');
    // The kernel's own tables are this database's: the schema and the running nodes stay.
    assert.ok((await call(k, '/api/agents', { method: 'POST', json: { manifest_toml: manifest('after-the-move') } })).status === 201);
  } finally {
    await lite.stop();
    await fake.stop();
  }
});

/** The same table on both engines, made by the test: values whose text forms must come back exactly. */
const VALUES_TABLES = {
  postgres: `CREATE TABLE test_values (id BIGINT PRIMARY KEY, big BIGINT, data BYTEA, ratio DOUBLE PRECISION, note TEXT);
    CREATE TABLE test_a_refs (value BIGINT NOT NULL REFERENCES test_values (id));`,
  sqlite: `CREATE TABLE test_values (id INTEGER PRIMARY KEY, big INTEGER, data BLOB, ratio REAL, note TEXT);
    CREATE TABLE test_a_refs (value INTEGER NOT NULL REFERENCES test_values (id));`,
};

test(
  'a PostgreSQL archive restores on SQLite (a fleet back onto one machine): rows, uploads, search and exact values come back',
  { skip, timeout: 120_000 },
  async () => {
    const fake = new FakeProvider();
    await fake.start();
    const pg = await start({ database: 'postgres', modules: ['scheduler'], fake, extra: embeddingsOn(fake) });
    const lite = await start({ database: 'sqlite', modules: ['scheduler'], fake, extra: embeddingsOn(fake) });
    try {
      const seeded = await seed(pg, fake, { name: 'homebound', memory: 'the user grows chillies', tz: 'America/Chicago' });
      const id = seeded.id;
      await pg.kernel.store.exec(VALUES_TABLES.postgres);
      await pg.kernel.store.run(`INSERT INTO test_values VALUES (1, 9007199254740993, ?, 0.1, 'é "quoted"\nline'), (2, -5, NULL, NULL, NULL)`, [VECTOR]);
      await pg.kernel.store.run('INSERT INTO test_a_refs VALUES (2)');
      const before = await apiState(pg, id);

      // The machine had its own state, which the restore replaces.
      assert.equal((await call(lite, '/api/agents', { method: 'POST', json: { manifest_toml: manifest('replaced') } })).status, 201);
      await lite.kernel.store.exec(VALUES_TABLES.sqlite);
      await lite.kernel.store.run("INSERT INTO test_values VALUES (7, 7, NULL, 7, 'mine')");
      const made = await call<Made>(pg, '/api/backup', { method: 'POST' });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      mkdirSync(path.join(lite.home, 'backups'), { recursive: true });
      copyFileSync(path.join(pg.home, 'backups', made.body.filename), path.join(lite.home, 'backups', made.body.filename));

      const restored = await call<Restored>(lite, '/api/restore', { method: 'POST', json: { filename: made.body.filename } });
      assert.equal(restored.status, 200, JSON.stringify(restored.body));
      assert.equal(restored.body.manifest.database?.engine, 'postgres', "the archive's own manifest");
      assert.ok(restored.body.modules_restarted.includes('memory'));
      assert.ok(
        !restored.body.warnings.some((w) => /memory_fts|memory_vec/.test(w)),
        `SQLite's own tables are left as they are quietly: ${restored.body.warnings.join('; ')}`,
      );
      assert.deepEqual(await apiState(lite, id), before);
      const values = await lite.kernel.store.many<Record<string, unknown>>(
        'SELECT id, CAST(big AS TEXT) AS big, data, ratio, note FROM test_values ORDER BY id',
      );
      assert.deepEqual(values, [
        { id: 1, big: '9007199254740993', data: VECTOR, ratio: 0.1, note: 'é "quoted"\nline' },
        { id: 2, big: '-5', data: null, ratio: null, note: null },
      ]);
      assert.deepEqual(await lite.kernel.store.many('SELECT value FROM test_a_refs'), [{ value: 2 }], 'a row restored before the one it refers to');
      // Full text through FTS5's triggers.
      await assertMoved(lite, seeded, 'chillies');
      // Writes go on after the restored rows; the audit trail holds the restore and verifies.
      assert.equal((await call(lite, '/api/memory', { method: 'POST', json: { content: 'back home', agent_id: id } })).status, 201);
      fake.enqueue({ text: 'home again' });
      assert.equal((await call(lite, `/api/agents/${id}/message`, { method: 'POST', json: { message: 'after the move back' } })).status, 200);
      assert.equal((await call<{ status: string }>(lite, '/api/audit/verify')).body.status, 'valid');
    } finally {
      await lite.stop();
      await pg.stop();
      await fake.stop();
    }
  },
);

test(
  'a PostgreSQL archive whose row refers to one it does not hold is refused on SQLite, naming the table; nothing changes',
  { skip, timeout: 60_000 },
  async () => {
    const pg = await start({ database: 'postgres' });
    const lite = await start({ database: 'sqlite' });
    try {
      await pg.kernel.store.exec(VALUES_TABLES.postgres.replace('REFERENCES test_values (id)', ''));
      await pg.kernel.store.exec('INSERT INTO test_a_refs VALUES (42)');
      const made = await call<Made>(pg, '/api/backup', { method: 'POST', json: { components: ['database'] } });
      assert.equal(made.status, 201);
      mkdirSync(path.join(lite.home, 'backups'), { recursive: true });
      copyFileSync(path.join(pg.home, 'backups', made.body.filename), path.join(lite.home, 'backups', made.body.filename));
      await lite.kernel.store.exec(VALUES_TABLES.sqlite);
      assert.equal((await call(lite, '/api/agents', { method: 'POST', json: { manifest_toml: manifest('stays') } })).status, 201);
      const refused = await call<{ error: string }>(lite, '/api/restore', { method: 'POST', json: { filename: made.body.filename } });
      assert.equal(refused.status, 400, JSON.stringify(refused.body));
      assert.match(refused.body.error, /table test_a_refs: a row refers to one of test_values the backup does not hold/);
      const agents = (await call<Array<{ name: string }>>(lite, '/api/agents')).body.map((a) => a.name);
      assert.deepEqual(agents, ['stays'], 'nothing was restored');
    } finally {
      await lite.stop();
      await pg.stop();
    }
  },
);

test(
  'a PostgreSQL archive on SQLite where memory ran and is now disabled is refused (409) saying what to do; nothing changes',
  { skip, timeout: 60_000 },
  async () => {
    const fake = new FakeProvider();
    await fake.start();
    const home = mkdtempSync(path.join(tmpdir(), 'talon-backup-novec-'));
    const pg = await start({ database: 'postgres' });
    let lite = await start({ database: 'sqlite', fake, extra: embeddingsOn(fake), home });
    try {
      // Memory ran here and indexed a vector (its vec0 table and the trigger that keeps it exist from then on).
      assert.equal((await call(lite, '/api/memory', { method: 'POST', json: { content: 'indexed once' } })).status, 201);
      await waitFor(async () => ((await embedded(lite)) === 1 ? true : undefined), 5000, 'the memory entry embedded');
      await lite.stop();
      lite = await start({ database: 'sqlite', fake, home, without: ['memory'] });
      assert.equal((await call(lite, '/api/agents', { method: 'POST', json: { manifest_toml: manifest('stays') } })).status, 201);
      const made = await call<Made>(pg, '/api/backup', { method: 'POST', json: { components: ['database'] } });
      assert.equal(made.status, 201);
      mkdirSync(path.join(home, 'backups'), { recursive: true });
      copyFileSync(path.join(pg.home, 'backups', made.body.filename), path.join(home, 'backups', made.body.filename));
      const refused = await call<{ error: string }>(lite, '/api/restore', { method: 'POST', json: { filename: made.body.filename } });
      assert.equal(refused.status, 409, JSON.stringify(refused.body));
      assert.match(refused.body.error, /table memory_\w+ cannot be emptied: .*'vec0'.*enable it, then restore again/);
      assert.deepEqual(
        (await call<Array<{ name: string }>>(lite, '/api/agents')).body.map((a) => a.name),
        ['stays'],
        'nothing was restored',
      );
    } finally {
      await lite.stop();
      await pg.stop();
      await fake.stop();
      rmSync(home, { recursive: true, force: true });
    }
  },
);
