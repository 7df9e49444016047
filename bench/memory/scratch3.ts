import Database from 'better-sqlite3';
import { pino } from 'pino';
import { fakeEmbedding } from '../../test/support/fake-provider.ts';
import { defaultMemoryConfig } from '../../modules/memory/config.ts';
import { Memory } from '../../modules/memory/services/memory.ts';
const db = new Database('/tmp/mb/talon.db');
const memory = new Memory({ db, log: pino({ level: 'silent' }), config: () => defaultMemoryConfig() });
const AGENT = '0b0b0b0b-0000-4000-8000-000000000001';
const rows = db.prepare('SELECT content FROM memory_entries ORDER BY random() LIMIT 500').all() as { content: string }[];
const mu = (l: string) => { const m = process.memoryUsage(); console.log(l, Object.fromEntries(Object.entries(m).map(([k, v]) => [k, Math.round(v / 1e6)]))); };
mu('start');
const vecOnly = process.argv[2] === 'vec';
const ftsOnly = process.argv[2] === 'fts';
for (const r of rows) {
  const q = r.content.split(' ').slice(2, 6).join(' ');
  const vector = Float32Array.from(fakeEmbedding(q, 384));
  if (vecOnly) memory.vectors.nearest(vector, 10, AGENT);
  else if (ftsOnly) memory.searcher.search(q, { agentId: AGENT, limit: 10 });
  else memory.searcher.search(q, { agentId: AGENT, limit: 10 }, { model: 'fake-embed-384', vector });
}
mu('after');
(globalThis as { gc?: () => void }).gc?.();
mu('after gc');
