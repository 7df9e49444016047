import Database from 'better-sqlite3';
import { pino } from 'pino';
import { existsSync } from 'node:fs';
import { fakeEmbedding } from '../../test/support/fake-provider.ts';
import { defaultMemoryConfig } from '../../modules/memory/config.ts';
import { Memory } from '../../modules/memory/services/memory.ts';
import { keywords, ftsQuery } from '../../modules/memory/services/text.ts';

const file = '/tmp/mb/talon.db';
if (!existsSync(file)) throw new Error('populate first');
const db = new Database(file);
const memory = new Memory({ db, log: pino({ level: 'silent' }), config: () => defaultMemoryConfig() });
const AGENT = '0b0b0b0b-0000-4000-8000-000000000001';
const rows = db.prepare('SELECT content FROM memory_entries ORDER BY random() LIMIT 300').all() as { content: string }[];
const queries = rows.map((r) => r.content.split(' ').slice(2, 6).join(' '));
const t = (fn: () => unknown) => { const s = process.cpuUsage(); fn(); const d = process.cpuUsage(s); return (d.user + d.system) / 1000; };
const p = (a: number[], q: number) => [...a].sort((x, y) => x - y)[Math.floor(a.length * q)].toFixed(2);
const fts: number[] = [], vec: number[] = [], full: number[] = [], ftsOnly: number[] = [];
for (const q of queries) {
  const words = keywords(q);
  fts.push(t(() => db.prepare(`SELECT e.seq AS seq, bm25(memory_fts) AS bm FROM memory_fts JOIN memory_entries e ON e.seq = memory_fts.rowid WHERE memory_fts MATCH ? AND e.agent_id = ? ORDER BY bm LIMIT 40`).all(ftsQuery(words), AGENT)));
  ftsOnly.push(t(() => db.prepare(`SELECT rowid, rank FROM memory_fts WHERE memory_fts MATCH ? ORDER BY rank LIMIT 40`).all(ftsQuery(words))));
  const v = Float32Array.from(fakeEmbedding(q, 384));
  vec.push(t(() => memory.vectors.nearest(v, 20, AGENT)));
  full.push(t(() => memory.searcher.search(q, { agentId: AGENT, limit: 10 }, { model: 'fake-embed-384', vector: v })));
}
console.log('fts join p50/p99', p(fts, 0.5), p(fts, 0.99));
console.log('fts only p50/p99', p(ftsOnly, 0.5), p(ftsOnly, 0.99));
console.log('vec p50/p99', p(vec, 0.5), p(vec, 0.99));
console.log('full p50/p99', p(full, 0.5), p(full, 0.99));
const matches = queries.slice(0, 20).map((q) => (db.prepare('SELECT count(*) n FROM memory_fts WHERE memory_fts MATCH ?').get(ftsQuery(keywords(q))) as { n: number }).n);
console.log('match counts', matches.join(' '));
{
  const S = memory.searcher as unknown as { searchTerms(w: string[]): string[] };
  const a: number[] = [], b: number[] = [], c: number[] = [], d: number[] = [], e: number[] = [];
  for (const q of queries) {
    const words = keywords(q);
    let terms: string[] = [];
    a.push(t(() => { terms = S.searchTerms(words); }));
    let rows: { seq: number }[] = [];
    b.push(t(() => { rows = terms.length ? db.prepare(`SELECT e.seq AS seq, bm25(memory_fts) AS bm FROM memory_fts JOIN memory_entries e ON e.seq = memory_fts.rowid WHERE memory_fts MATCH ? AND e.agent_id = ? ORDER BY bm LIMIT 40`).all(ftsQuery(terms), AGENT) as { seq: number }[] : []; }));
    const v = Float32Array.from(fakeEmbedding(q, 384));
    let co: number[] = [];
    c.push(t(() => { co = memory.vectors.nearest(v, 10, AGENT); }));
    const all = [...new Set([...co, ...rows.map((r) => r.seq)])];
    d.push(t(() => memory.vectors.vectors(all, 'fake-embed-384')));
    e.push(t(() => memory.entries.rowsBySeq(all)));
  }
  console.log('terms', p(a, 0.5), p(a, 0.99), 'fts pruned', p(b, 0.5), p(b, 0.99), 'vec10', p(c, 0.5), p(c, 0.99), 'vectors', p(d, 0.5), p(d, 0.99), 'rows', p(e, 0.5), p(e, 0.99));
}
{
  const S = memory.searcher as unknown as { searchTerms(w: string[]): string[] };
  const a: number[] = [], b: number[] = [], c: number[] = [];
  for (const q of queries) {
    const terms = S.searchTerms(keywords(q));
    if (!terms.length) continue;
    a.push(t(() => db.prepare(`SELECT rowid, rank FROM memory_fts WHERE memory_fts MATCH ? ORDER BY rank LIMIT 80`).all(ftsQuery(terms))));
    b.push(t(() => db.prepare(`SELECT rowid, bm25(memory_fts) b FROM memory_fts WHERE memory_fts MATCH ? ORDER BY b LIMIT 80`).all(ftsQuery(terms))));
    c.push(t(() => db.prepare(`SELECT e.seq AS seq, bm25(memory_fts) AS bm FROM memory_fts JOIN memory_entries e ON e.seq = memory_fts.rowid WHERE memory_fts MATCH ? AND e.agent_id = ? ORDER BY bm LIMIT 40`).all(ftsQuery(terms), AGENT)));
  }
  console.log('rank', p(a, 0.5), p(a, 0.99), 'bm25 nojoin', p(b, 0.5), p(b, 0.99), 'join', p(c, 0.5), p(c, 0.99));
}
