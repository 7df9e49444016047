/**
 * Schema parity: for every module with migrations, what its SQLite files build (a temp file) against what its
 * migrations/postgres/ files build (a fresh PostgreSQL database, through the kernel's own migration code): the same
 * migration ids, tables, columns (names, mapped types, nullability), primary and unique keys, and indexes (names,
 * columns, unique, partial). The mapping is docs/decisions-fleet.md's. The kernel's own tables are compared too.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { parse } from 'smol-toml';
import type { Store } from '@talon/module-sdk';
import { postgresMissing, startPostgres, type PostgresServer } from '@talon/testing';
import { applyMigrations, LEDGER, migratePostgres, pendingMigrations, prepareLedger } from '../../kernel/migrations.ts';
import { PostgresStore } from '../../kernel/store/postgres.ts';
import { FEED_TABLES } from '../../kernel/store/feed.ts';
import { NODE_TABLES } from '../../kernel/store/nodes.ts';
import { FLEET_TABLES } from '../../kernel/store/fleet.ts';

/**
 * Modules whose migrations have no PostgreSQL twins yet (they cannot run on PostgreSQL). Whoever writes a module's
 * migrations/postgres/ files takes it off this list; the first test fails while the list and the folders disagree.
 */
const KNOWN_MISSING: string[] = [];

/**
 * What one engine has and the other lacks by design, per module, left out of the comparison (each with its reason):
 * `postgres: ['table.column', 'index name', …]` for objects only the PostgreSQL files make (a tsvector column standing in
 * for an FTS5 table), `sqlite: […]` for the reverse. SQLite virtual tables (FTS5, vec0) and their shadow tables are
 * always left out.
 */
const ENGINE_ONLY: Record<string, { sqlite?: string[]; postgres?: string[] }> = {
  // memory: FTS5 and sqlite-vec on SQLite; a tsvector column with its GIN index and a binary-quantised vector column
  // on PostgreSQL; the relation name indexes are COLLATE NOCASE columns on SQLite, LOWER() expressions on PostgreSQL.
  memory: {
    sqlite: ['memory_relations_subject', 'memory_relations_object'],
    postgres: ['memory_entries.content_tsv', 'memory_entries_fts', 'memory_embeddings.quantized', 'memory_relations_subject', 'memory_relations_object'],
  },
  // workflows: the name index is on name COLLATE NOCASE on SQLite, on LOWER(name) on PostgreSQL (what the lookup compares).
  workflows: { sqlite: ['workflows_workflows_name'], postgres: ['workflows_workflows_name'] },
};

const repo = path.resolve(import.meta.dirname, '../..');
const modulesDir = path.join(repo, 'modules');
const sqlIn = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.sql')) : []);
const withMigrations = readdirSync(modulesDir)
  .filter((m) => sqlIn(path.join(modulesDir, m, 'migrations')).length)
  .sort();
const ported = (m: string) => sqlIn(path.join(modulesDir, m, 'migrations', 'postgres')).length > 0;

test('every module with migrations has PostgreSQL ones, except those KNOWN_MISSING lists (and it lists no other)', () => {
  const missing = withMigrations.filter((m) => !ported(m));
  const listed = [...KNOWN_MISSING].sort();
  // A listed module whose migrations are not in this tree (yet) is no difference: only one that has its twins is done.
  const done = listed.filter((m) => withMigrations.includes(m) && ported(m));
  const unlisted = missing.filter((m) => !listed.includes(m));
  assert.deepEqual(done, [], `these now have migrations/postgres/: take them off KNOWN_MISSING: ${done.join(', ')}`);
  assert.deepEqual(unlisted, [], `these have SQLite migrations and no migrations/postgres/ files: ${unlisted.join(', ')}`);
  const ids = (m: string, sub = '') => sqlIn(path.join(modulesDir, m, 'migrations', sub)).sort();
  for (const m of withMigrations.filter(ported)) assert.deepEqual(ids(m, 'postgres'), ids(m), `${m}: the migration ids of both engines`);
});

/** A table as both engines are compared: columns in order, keys, indexes by name. */
interface Table {
  columns: Array<{ name: string; type: string; notNull: boolean }>;
  primaryKey: string[];
  uniques: string[][];
  indexes: Record<string, { columns: string[]; unique: boolean; partial: boolean }>;
}
type Schema = Record<string, Table>;

/** docs/decisions-fleet.md's mapping: the PostgreSQL type a SQLite column's declared type becomes. */
function mappedType(declared: string, rowidAlias: boolean, generated: boolean): string {
  const t = declared.toUpperCase();
  let type: string;
  if (rowidAlias) type = 'bigint identity';
  else if (t.includes('INT')) type = 'bigint';
  else if (/CHAR|CLOB|TEXT/.test(t)) type = 'text';
  else if (/REAL|FLOA|DOUB/.test(t)) type = 'double precision';
  else if (t === 'BLOB' || t === '') type = 'bytea';
  else throw new Error(`no PostgreSQL mapping for the SQLite type '${declared}': add one to docs/decisions-fleet.md`);
  return generated ? `${type} generated` : type;
}

type SqliteColumn = { name: string; type: string; notnull: number; pk: number; hidden: number };
type SqliteIndex = { name: string; unique: number; origin: string; partial: number };

function sqliteTable(db: Database.Database, name: string): Table {
  const all = db.prepare('SELECT * FROM pragma_table_xinfo(?)').all(name) as SqliteColumn[];
  const pk = all.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk);
  const rowidAlias = pk.length === 1 && pk[0].type.toUpperCase() === 'INTEGER' && !/WITHOUT ROWID/i.test(tableSql(db, name));
  const columns = all
    .filter((c) => c.hidden !== 1)
    .map((c) => ({
      name: c.name,
      type: mappedType(c.type, rowidAlias && c.pk === 1, c.hidden >= 2),
      notNull: Boolean(c.notnull) || c.pk > 0,
    }));
  const table: Table = { columns, primaryKey: pk.map((c) => c.name), uniques: [], indexes: {} };
  for (const index of db.prepare('SELECT * FROM pragma_index_list(?)').all(name) as SqliteIndex[]) {
    const keyColumns = (db.prepare('SELECT name FROM pragma_index_info(?) ORDER BY seqno').all(index.name) as Array<{ name: string | null }>).map(
      (c) => c.name ?? '<expression>',
    );
    if (index.origin === 'u') table.uniques.push(keyColumns);
    else if (index.origin === 'c') table.indexes[index.name] = { columns: keyColumns, unique: Boolean(index.unique), partial: Boolean(index.partial) };
  }
  table.uniques.sort();
  return table;
}

const tableSql = (db: Database.Database, name: string) =>
  (db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) as { sql: string }).sql;

/** The tables SQLite made that `owns` names, but for its own and virtual tables with their shadow tables. */
function sqliteSchema(db: Database.Database, owns: (table: string) => boolean): Schema {
  const tables = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as Array<{ name: string; sql: string }>;
  const virtual = tables.filter((t) => /^CREATE VIRTUAL TABLE/i.test(t.sql)).map((t) => t.name);
  const schema: Schema = {};
  for (const { name } of tables) {
    if (name.startsWith('sqlite_') || !owns(name)) continue;
    if (virtual.some((v) => name === v || name.startsWith(`${v}_`))) continue;
    schema[name] = sqliteTable(db, name);
  }
  return schema;
}

async function postgresSchema(store: Store, owns: (table: string) => boolean): Promise<Schema> {
  const columns = await store.many<{
    table_name: string;
    column_name: string;
    data_type: string;
    is_nullable: string;
    is_identity: string;
    is_generated: string;
  }>(
    `SELECT table_name, column_name, data_type, is_nullable, is_identity, is_generated FROM information_schema.columns
     WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`,
  );
  const schema: Schema = {};
  for (const c of columns) {
    if (!owns(c.table_name)) continue;
    const table = (schema[c.table_name] ??= { columns: [], primaryKey: [], uniques: [], indexes: {} });
    const type = `${c.data_type}${c.is_identity === 'YES' ? ' identity' : ''}${c.is_generated === 'ALWAYS' ? ' generated' : ''}`;
    table.columns.push({ name: c.column_name, type, notNull: c.is_nullable === 'NO' });
  }
  const indexes = await store.many<{
    table_name: string;
    name: string;
    unique: boolean;
    primary: boolean;
    constraint: string | null;
    partial: boolean;
    columns: Array<string | null>;
  }>(
    `SELECT t.relname AS table_name, i.relname AS name, ix.indisunique AS unique, ix.indisprimary AS primary,
       (SELECT conname FROM pg_constraint c WHERE c.conindid = ix.indexrelid LIMIT 1) AS constraint,
       ix.indpred IS NOT NULL AS partial,
       ARRAY(SELECT a.attname::text FROM unnest(ix.indkey) WITH ORDINALITY k(attnum, ord)
             LEFT JOIN pg_attribute a ON a.attrelid = ix.indrelid AND a.attnum = k.attnum ORDER BY k.ord) AS columns
     FROM pg_index ix JOIN pg_class i ON i.oid = ix.indexrelid JOIN pg_class t ON t.oid = ix.indrelid
     JOIN pg_namespace n ON n.oid = t.relnamespace WHERE n.nspname = 'public' ORDER BY i.relname`,
  );
  for (const ix of indexes) {
    const table = schema[ix.table_name];
    if (!table) continue;
    const keyColumns = ix.columns.map((c) => c ?? '<expression>');
    if (ix.primary) table.primaryKey = keyColumns;
    else if (ix.constraint) table.uniques.push(keyColumns);
    else table.indexes[ix.name] = { columns: keyColumns, unique: ix.unique, partial: ix.partial };
  }
  for (const table of Object.values(schema)) table.uniques.sort();
  return schema;
}

/** Leaves out what one engine has by design (ENGINE_ONLY): 'table', 'table.column' or an index name. */
function without(schema: Schema, names: readonly string[] = []): Schema {
  for (const name of names) {
    const [table, column] = name.split('.');
    if (column) schema[table].columns = schema[table].columns.filter((c) => c.name !== column);
    else if (schema[name]) delete schema[name];
    else for (const t of Object.values(schema)) delete t.indexes[name];
  }
  return schema;
}

/** The module and, first, the modules it hard-depends on (a migration may read their tables: catalog, secrets'). */
function withDependencies(module: string, seen = new Set<string>()): string[] {
  if (seen.has(module)) return [];
  seen.add(module);
  const manifest = parse(readFileSync(path.join(modulesDir, module, 'module.toml'), 'utf8')) as { depends?: string[] };
  return [...(manifest.depends ?? []).flatMap((d) => withDependencies(d, seen)), module].filter((m) => withMigrations.includes(m));
}

describe('schema parity on PostgreSQL', { skip: postgresMissing() }, () => {
  let server: PostgresServer;
  let dir: string;
  before(async () => {
    server = await startPostgres();
    dir = mkdtempSync(path.join(tmpdir(), 'talon-parity-'));
  });
  after(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Both engines' schemas after `build` ran on each (a SQLite file, a fresh PostgreSQL database). */
  async function build(
    name: string,
    owns: (table: string) => boolean,
    onSqlite: (db: Database.Database) => void,
    onPostgres: (store: PostgresStore) => Promise<void>,
  ): Promise<{ sqlite: Schema; postgres: Schema }> {
    const db = new Database(path.join(dir, `${name}.db`));
    const url = await server.createDatabase();
    const store = new PostgresStore({ url });
    try {
      onSqlite(db);
      await prepareLedger(store);
      await onPostgres(store);
      return { sqlite: sqliteSchema(db, owns), postgres: await postgresSchema(store, owns) };
    } finally {
      db.close();
      await store.close();
      await server.dropDatabase(url);
    }
  }

  for (const module of withMigrations.filter(ported)) {
    test(`${module}: both engines build the same tables, columns, keys and indexes`, async () => {
      // Dependencies without PostgreSQL files yet are left out: a migration that reads their tables then fails, naming them.
      const chain = withDependencies(module).filter((m) => m === module || ported(m));
      const prefix = `${module.replace(/-/g, '_')}_`;
      const schemas = await build(
        module,
        (table) => table.startsWith(prefix),
        (db) => {
          for (const m of chain) applyMigrations(db, m, pendingMigrations(db, m, path.join(modulesDir, m)));
        },
        async (store) => {
          for (const m of chain) await migratePostgres(store, m, path.join(modulesDir, m));
        },
      );
      assert.ok(Object.keys(schemas.sqlite).length > 0, `${module}: no table found on SQLite`);
      const only = ENGINE_ONLY[module] ?? {};
      assert.deepEqual(without(schemas.postgres, only.postgres), without(schemas.sqlite, only.sqlite));
    });
  }

  test("the kernel's own tables (ledger, nodes, change feed, events, fleet) are the same on both engines", async () => {
    const schemas = await build(
      'kernel',
      (table) => table.startsWith('kernel_'),
      (db) => {
        for (const ddl of [LEDGER, ...NODE_TABLES.sqlite, ...FEED_TABLES.sqlite, ...FLEET_TABLES.sqlite]) db.exec(ddl);
      },
      async (store) => {
        for (const ddl of [...NODE_TABLES.postgres, ...FEED_TABLES.postgres, ...FLEET_TABLES.postgres]) await store.exec(ddl);
      },
    );
    assert.deepEqual(Object.keys(schemas.sqlite).sort(), ['kernel_changes', 'kernel_events', 'kernel_fleet', 'kernel_migrations', 'kernel_nodes']);
    assert.deepEqual(schemas.postgres, schemas.sqlite);
  });
});
