/**
 * Cross-node event fan-out (issue 30, "Speed"): two `npm start` processes on one PostgreSQL database, a WebSocket chat
 * connection on each. An agent spawned on node a is announced to both sockets (`agents_updated`, sent when an agent
 * is spawned here or by another process); the lag is when node b's socket lists it minus when node a's own socket
 * did, the same clock for both. Target: p99 ≤ 50 ms.
 */
import { FakeProvider, startPostgres } from '@talon/testing';
import { buildOnce, Fleet, spawnAgent } from '../test/fleet/nodes.ts';
import { AgentsWatch } from '../test/fleet/observe.ts';
import { percentile } from './util.ts';

const SPAWNS = 200;

export async function fleetFanoutBench(): Promise<Record<string, string>> {
  const fake = new FakeProvider();
  await fake.start();
  const server = await startPostgres();
  buildOnce();
  const fleet = new Fleet({
    databaseUrl: await server.createDatabase(),
    providerUrl: fake.url,
    config: ['[agents_ws]', 'agents_updated_interval_ms = 600000'],
  });
  const watches = { a: new AgentsWatch(), b: new AgentsWatch() };
  try {
    const [a, b] = await Promise.all([fleet.start('a'), fleet.start('b')]);
    const booted = performance.now();
    const socketAgent = await spawnAgent(a, 'socket');
    // The other node knows the agent before a socket is opened on it there.
    for (const deadline = Date.now() + 5_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 20)))
      if ((await fetch(`${b.url}/api/agents/${socketAgent}`)).status === 200) break;
    await Promise.all([watches.a.open(a, socketAgent), watches.b.open(b, socketAgent)]);
    const lags: number[] = [];
    const unheard: number[] = [];
    let lastUnheardAt = booted;
    for (let i = 0; i < SPAWNS; i++) {
      const spawnedAt = performance.now();
      const id = await spawnAgent(a, `fanout-${i}`);
      const deadline = performance.now() + 2_000;
      while ((!watches.a.seen.has(id) || !watches.b.seen.has(id)) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 1));
      if (watches.a.seen.has(id) && watches.b.seen.has(id)) lags.push(watches.b.seen.get(id)! - watches.a.seen.get(id)!);
      else {
        unheard.push(i);
        lastUnheardAt = spawnedAt;
      }
      // Spread out, as events come: not a burst that queues behind itself.
      await new Promise((r) => setTimeout(r, 20));
    }
    return {
      'cross-node event fan-out, p50 / p90 / p99 (ms; target p99 ≤ 50)': [50, 90, 99].map((q) => percentile(lags, q).toFixed(1)).join(' / '),
      'events never heard on the other node within 2 s': unheard.length
        ? `${unheard.length} of ${SPAWNS}: spawns ${unheard[0]}–${unheard.at(-1)}, the last spawned ${((lastUnheardAt - booted) / 1000).toFixed(1)} s after both nodes answered`
        : `none of ${SPAWNS}`,
    };
  } finally {
    watches.a.close();
    watches.b.close();
    await fleet.stop();
    await fake.stop();
    await server.stop();
  }
}
