/**
 * Memory figures: hybrid search latency over 100,000 entries of one agent
 * (FTS5 + 384-dim vectors from the deterministic fake embedder, written
 * straight into the tables before the daemon starts), KV put/get latency, and
 * the daemon's RSS with those entries. Requests go over HTTP to a daemon
 * process running the memory module; query embeddings come from the fake
 * provider's /embeddings, as in production.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { FakeProvider, fakeEmbedding } from '@talon/testing';
import { applyMigrations, pendingMigrations } from '../kernel/migrations.ts';
import { SqliteStore } from '../kernel/store/sqlite.ts';
import { defaultMemoryConfig } from '../modules/memory/config.ts';
import { Memory } from '../modules/memory/services/memory.ts';
import { freePort, killTree, percentile, rssMb, spawnDetached, waitHttp } from './util.ts';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const ENTRIES = 100_000;
const DIM = 384;
const AGENT = '0b0b0b0b-0000-4000-8000-000000000001';
const MODEL = 'fake-embed-384';

/** A deterministic pseudo-random generator (mulberry32), so every run builds the same corpus. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYLLABLES = 'ka lo mi ra te su no vi da pe zu ba ko ri mu sa ne to fi gu'.split(' ');
/** A vocabulary of 5,000 made-up words; Zipf-like picks make some common and most rare. */
function vocabulary(random: () => number): string[] {
  const words = new Set<string>();
  while (words.size < 5000) {
    const n = 2 + Math.floor(random() * 3);
    let w = '';
    for (let i = 0; i < n; i++) w += SYLLABLES[Math.floor(random() * SYLLABLES.length)];
    words.add(w);
  }
  return [...words];
}

function sentence(words: string[], random: () => number, length: number): string {
  const out: string[] = [];
  for (let i = 0; i < length; i++) out.push(words[Math.floor(words.length * random() ** 2.5)]);
  return `The user ${out.join(' ')}.`;
}

async function populate(dbFile: string, words: string[], random: () => number): Promise<number> {
  const started = performance.now();
  const db = new Database(dbFile);
  db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  applyMigrations(db, 'memory', pendingMigrations(db, 'memory', path.join(ROOT, 'modules/memory')));
  const store = new SqliteStore(db);
  const memory = new Memory({ store, log: pino({ level: 'silent' }), config: () => defaultMemoryConfig() });
  await memory.init();
  await memory.vectors.ensureTable(DIM);
  const now = Date.now();
  // No session level: the daemon's start-up cleanup would expire idle session entries.
  const levels = ['user', 'agent'];
  const batch = 5000;
  for (let start = 0; start < ENTRIES; start += batch) {
    await store.tx(async (t) => {
      for (let i = start; i < Math.min(ENTRIES, start + batch); i++) {
        const content = sentence(words, random, 8 + Math.floor(random() * 12));
        const at = now - Math.floor(random() * 90 * 86_400_000);
        const { seq } = (await t.one<{ seq: number }>(
          `INSERT INTO memory_entries (id, agent_id, level, content, created_at, updated_at, accessed_at, decayed_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
          [`00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, AGENT, levels[i % 2], content, at, at, at, at],
        ))!;
        await memory.vectors.put(t, seq, AGENT, MODEL, Float32Array.from(fakeEmbedding(content, DIM)));
      }
    });
  }
  db.pragma('wal_checkpoint(TRUNCATE)');
  memory.stop();
  db.close();
  return performance.now() - started;
}

/** Wall-clock and CPU milliseconds of a call (CPU time is what the machine's load does not inflate). */
async function clock(fn: () => Promise<unknown>): Promise<[number, number]> {
  const wall = performance.now();
  const cpu = process.cpuUsage();
  await fn();
  const d = process.cpuUsage(cpu);
  return [performance.now() - wall, (d.user + d.system) / 1000];
}

/** The services alone, in this process, on the populated database: no HTTP, no query-embedding call. */
async function inProcess(dbFile: string, queries: string[], words: string[], random: () => number) {
  const db = new Database(dbFile);
  const memory = new Memory({ store: new SqliteStore(db), log: pino({ level: 'silent' }), config: () => defaultMemoryConfig() });
  await memory.init();
  const search = { wall: [] as number[], cpu: [] as number[] };
  for (const [i, q] of queries.entries()) {
    const vector = Float32Array.from(fakeEmbedding(q, DIM));
    const [wall, cpu] = await clock(() => memory.searcher.search(q, { agentId: AGENT, limit: 10 }, { model: MODEL, vector }));
    if (i >= 100) (search.wall.push(wall), search.cpu.push(cpu));
  }
  const put: number[] = [];
  const get: number[] = [];
  for (let i = 0; i < 2000; i++) {
    const key = `svc.key:${i % 200}`;
    const value = { i, text: sentence(words, random, 10) };
    put.push((await clock(() => memory.kv.set(AGENT, key, value)))[0]);
    get.push((await clock(() => memory.kv.get(AGENT, key)))[0]);
  }
  memory.stop();
  db.close();
  return { search, put, get };
}

async function timed(fn: () => Promise<Response>): Promise<number> {
  const t = performance.now();
  const res = await fn();
  await res.arrayBuffer();
  if (res.status >= 300) throw new Error(`HTTP ${res.status}`);
  return performance.now() - t;
}

const ms = (x: number) => Math.round(x * 100) / 100;

export async function memoryBench() {
  const random = rng(42);
  const words = vocabulary(random);
  const fake = new FakeProvider();
  fake.embeddingDim = DIM;
  await fake.start();
  const port = await freePort();
  const home = mkdtempSync(path.join(tmpdir(), 'talon-bench-memory-'));
  writeFileSync(
    path.join(home, 'config.toml'),
    `api_listen = "127.0.0.1:${port}"\nlog_level = "warn"\nrate_limit_per_second = 1000000\n[memory]\nembedding_provider = "${fake.url}/v1"\nembedding_model = "${MODEL}"\n`,
  );
  const populateMs = await populate(path.join(home, 'talon.db'), words, random);
  // Distinct queries (3-6 words each), so neither the query-embedding cache nor SQLite's page cache of one query helps.
  const queries = Array.from({ length: 600 }, () => {
    const n = 3 + Math.floor(random() * 4);
    return Array.from({ length: n }, () => words[Math.floor(words.length * random() ** 1.5)]).join(' ');
  });
  const local = await inProcess(path.join(home, 'talon.db'), queries, words, random);
  const daemon = spawnDetached(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/memory/server.ts'), home], {});
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitHttp(`${base}/api/memory/agents/${AGENT}/count`, 60_000, 20);
    const stats = (await (await fetch(`${base}/api/memory/agents/${AGENT}/stats`)).json()) as { total: number; embedded: number; embedding_status: string };
    if (stats.total !== ENTRIES || stats.embedded !== ENTRIES) throw new Error(`expected ${ENTRIES} embedded entries, got ${JSON.stringify(stats)}`);

    const queriesHttp = queries.map((q) => q.split(' ').reverse().join(' ')); // new texts for the query-embedding cache
    const search = (q: string) => fetch(`${base}/api/memory/agents/${AGENT}/search?q=${encodeURIComponent(q)}&limit=10`);
    for (const q of queriesHttp.slice(0, 100)) await timed(() => search(q)); // warm-up
    const searchTimes: number[] = [];
    for (const q of queriesHttp.slice(100)) searchTimes.push(await timed(() => search(q)));
    const sample = (await (await search(queriesHttp[0])).json()) as { mode: string; results: unknown[] };

    const putTimes: number[] = [];
    const getTimes: number[] = [];
    for (let i = 0; i < 1200; i++) {
      const key = `bench.key:${i % 200}`;
      const value = { i, text: sentence(words, random, 10), list: [1, 2, 3] };
      const put = await timed(() =>
        fetch(`${base}/api/memory/agents/${AGENT}/kv/${key}`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ value }),
        }),
      );
      const get = await timed(() => fetch(`${base}/api/memory/agents/${AGENT}/kv/${key}`));
      if (i >= 200) {
        putTimes.push(put);
        getTimes.push(get);
      }
    }
    const rss = rssMb(daemon.pid!);
    return {
      entries: ENTRIES,
      'populate (FTS5 + vectors, s)': ms(populateMs / 1000),
      'search mode': sample.mode,
      'search p50 / p99 ms, in-process wall (500 distinct queries, limit 10)': `${ms(percentile(local.search.wall, 50))} / ${ms(percentile(local.search.wall, 99))}`,
      'search p50 / p99 ms, in-process CPU': `${ms(percentile(local.search.cpu, 50))} / ${ms(percentile(local.search.cpu, 99))}`,
      'search p50 / p99 ms, HTTP incl. query embedding': `${ms(percentile(searchTimes, 50))} / ${ms(percentile(searchTimes, 99))}`,
      'kv put / get p50 ms, in-process': `${ms(percentile(local.put, 50))} / ${ms(percentile(local.get, 50))}`,
      'kv put / get p50 ms, HTTP': `${ms(percentile(putTimes, 50))} / ${ms(percentile(getTimes, 50))}`,
      'daemon RSS MB (100k entries, after the searches)': Math.round(rss * 10) / 10,
      'load average (1 min) at the end, 2 cores': loadavg()[0].toFixed(1),
    };
  } finally {
    await killTree(daemon);
    await fake.stop();
    rmSync(home, { recursive: true, force: true });
  }
}
