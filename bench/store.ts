/**
 * The storage port's cost (issue 24): each statement through the SQLite store against the same statement on raw
 * better-sqlite3 (a cached prepared statement), in one run on one database file. The target: the store adds at most
 * 5 µs p50 per statement. Figures are per statement, measured in batches so that the clock's resolution does not
 * dominate; the store's are awaited one by one, as a module's code awaits them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { SqliteStore } from '../kernel/store/sqlite.ts';
import { median, percentile } from './util.ts';

const ROWS = 10_000;
const BATCH = 200;
const BATCHES = 200;

type Case = { name: string; sql: string; params: (i: number) => (string | number)[]; kind: 'one' | 'run' | 'many' };

const CASES: Case[] = [
  { name: 'point read', sql: 'SELECT id, name, n FROM items WHERE id = ?', params: (i) => [(i % ROWS) + 1], kind: 'one' },
  { name: 'range read (10 rows)', sql: 'SELECT id, name, n FROM items WHERE id > ? ORDER BY id LIMIT 10', params: (i) => [i % ROWS], kind: 'many' },
  { name: 'update', sql: 'UPDATE items SET n = n + 1 WHERE id = ?', params: (i) => [(i % ROWS) + 1], kind: 'run' },
];

/** µs per statement for each batch. */
async function measure(step: (i: number) => unknown): Promise<number[]> {
  const perStatement: number[] = [];
  for (let b = 0; b < BATCHES; b++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < BATCH; i++) await step(b * BATCH + i);
    perStatement.push(Number(process.hrtime.bigint() - start) / 1_000 / BATCH);
  }
  return perStatement;
}

export async function benchStore(): Promise<Record<string, string>> {
  const dir = mkdtempSync(path.join(tmpdir(), 'talon-bench-store-'));
  const db = new Database(path.join(dir, 'talon.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, n INTEGER NOT NULL)');
  const insert = db.prepare('INSERT INTO items (name, n) VALUES (?, ?)');
  db.transaction(() => {
    for (let i = 0; i < ROWS; i++) insert.run(`item ${i}`, i);
  })();
  const store = new SqliteStore(db);
  const figures: Record<string, string> = {};
  try {
    for (const c of CASES) {
      const raw = db.prepare(c.sql);
      const rawStep =
        c.kind === 'one'
          ? (i: number) => raw.get(...c.params(i))
          : c.kind === 'many'
            ? (i: number) => raw.all(...c.params(i))
            : (i: number) => raw.run(...c.params(i));
      const storeStep = (i: number) => store[c.kind](c.sql, c.params(i));
      // Warm both (prepared statements, JIT), then alternate so that neither gets the quieter half of the run.
      await measure(rawStep);
      await measure(storeStep);
      const rawRuns: number[] = [];
      const storeRuns: number[] = [];
      for (let round = 0; round < 3; round++) {
        rawRuns.push(...(await measure(rawStep)));
        storeRuns.push(...(await measure(storeStep)));
      }
      const added = median(storeRuns) - median(rawRuns);
      figures[`${c.name}: raw p50 / store p50 / added p50 (µs)`] =
        `${median(rawRuns).toFixed(2)} / ${median(storeRuns).toFixed(2)} / ${added.toFixed(2)} (target ≤ 5)`;
      figures[`${c.name}: raw p99 / store p99 (µs)`] = `${percentile(rawRuns, 99).toFixed(2)} / ${percentile(storeRuns, 99).toFixed(2)}`;
    }
    const txRuns = await measure((i) =>
      store.tx(async (t) => {
        await t.run('UPDATE items SET n = n + 1 WHERE id = ?', [(i % ROWS) + 1]);
        await t.one('SELECT n FROM items WHERE id = ?', [(i % ROWS) + 1]);
      }),
    );
    figures['transaction of an update and a read, p50 (µs)'] = median(txRuns).toFixed(2);
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return figures;
}
