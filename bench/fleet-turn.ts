/**
 * Turn overhead on PostgreSQL against SQLite (issue 30, "Speed"): two `npm start` processes in the same run, one on a
 * fresh database of a loopback PostgreSQL (testing kit's startPostgres), one on SQLite in its home, both in front of
 * the same instant fake provider. A blocking message's overhead is the client's time minus the provider's own time for
 * that request; rounds alternate between the two so load on the machine hits both alike. Targets: PostgreSQL p50 at
 * most 2× SQLite's and at most 8 ms.
 */
import { FakeProvider, startPostgres, type RecordedRequest } from '@talon/testing';
import { buildOnce, Fleet, spawnAgent, type FleetNode } from '../test/fleet/nodes.ts';
import { timedClient } from '../test/fleet/timing.ts';
import { percentile } from './util.ts';

const ROUNDS = 4;
const TURNS_PER_ROUND = 100;

/** `n` blocking messages to one agent; each one's time minus the provider's. A fresh session every 20 turns. */
async function overheads(fake: FakeProvider, node: FleetNode, agentId: string, n: number, out: number[]): Promise<void> {
  const client = timedClient();
  try {
    for (let i = 0; i < n; i++) {
      if (i % 20 === 0) await client.call(`${node.url}/api/agents/${agentId}/session/reset`, 'POST', {});
      const seen = fake.requests.length;
      const res = await client.call(`${node.url}/api/agents/${agentId}/message`, 'POST', { message: 'ping' });
      if (res.status !== 200) throw new Error(`node ${node.name} answered ${res.status}: ${res.text}`);
      const sent: RecordedRequest | undefined = fake.requests[seen];
      if (!sent?.finishedAt || fake.requests.length !== seen + 1) throw new Error('expected exactly one provider call per message');
      out.push(res.ms - (sent.finishedAt - sent.startedAt!));
    }
  } finally {
    client.close();
  }
}

export async function fleetTurnBench(): Promise<Record<string, string>> {
  const fake = new FakeProvider().setFallback({ text: 'pong', usage: { input: 3, output: 1 } });
  await fake.start();
  const server = await startPostgres();
  buildOnce();
  const onPostgres = new Fleet({ databaseUrl: await server.createDatabase(), providerUrl: fake.url });
  const onSqlite = new Fleet({ providerUrl: fake.url });
  try {
    const [pgNode, sqliteNode] = await Promise.all([onPostgres.start('postgres'), onSqlite.start('sqlite')]);
    const sides = [
      { node: pgNode, agent: await spawnAgent(pgNode, 'bench'), figures: [] as number[] },
      { node: sqliteNode, agent: await spawnAgent(sqliteNode, 'bench'), figures: [] as number[] },
    ];
    for (const side of sides) await overheads(fake, side.node, side.agent, 40, []);
    for (let round = 0; round < ROUNDS; round++) {
      for (const side of round % 2 ? [...sides].reverse() : sides) await overheads(fake, side.node, side.agent, TURNS_PER_ROUND, side.figures);
    }
    const [pg, sqlite] = sides.map((s) => s.figures);
    const p = (v: number[], q: number) => percentile(v, q).toFixed(2);
    return {
      'blocking message overhead on PostgreSQL, p50 / p99 (ms; target p50 ≤ 8)': `${p(pg, 50)} / ${p(pg, 99)}`,
      'blocking message overhead on SQLite, p50 / p99 (ms)': `${p(sqlite, 50)} / ${p(sqlite, 99)}`,
      'PostgreSQL / SQLite at p50 (target ≤ 2×)': `${(percentile(pg, 50) / percentile(sqlite, 50)).toFixed(2)}×`,
    };
  } finally {
    await Promise.all([onPostgres.stop(), onSqlite.stop()]);
    await fake.stop();
    await server.stop();
  }
}
