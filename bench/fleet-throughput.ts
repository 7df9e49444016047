/**
 * Throughput of two nodes against one (issue 30, "Speed"): `npm start` processes on one PostgreSQL database, the fake
 * provider answering instantly. CLIENTS clients each send OpenAI chat-completions to an agent of their own (turns of
 * one session run one at a time, so each client has its session) for WINDOW_MS, first all to one node, then split
 * over two. Reported: turns per second of each, the ratio (target ≥ 1.6×), and CPU per turn of the nodes and of
 * PostgreSQL (its postmaster and backends). On a machine with two cores the two nodes, PostgreSQL and the clients share
 * them: the ratio there says how far the work is from the CPU, not what two machines would do.
 */
import { FakeProvider, startPostgres } from '@talon/testing';
import { buildOnce, Fleet, spawnAgent, type FleetNode } from '../test/fleet/nodes.ts';
import { timedClient, treeCpuMs } from '../test/fleet/timing.ts';
import { cpuMs } from './util.ts';

const CLIENTS = 16;
const WINDOW_MS = 15_000;

/** Every client sends turns back to back until the window ends; the turns completed. */
async function drive(targets: Array<{ node: FleetNode; agent: string }>, until: number): Promise<number> {
  const counts = await Promise.all(
    targets.map(async ({ node, agent }) => {
      const client = timedClient();
      let done = 0;
      try {
        while (performance.now() < until) {
          const res = await client.call(`${node.url}/v1/chat/completions`, 'POST', { model: agent, messages: [{ role: 'user', content: 'ping' }] });
          if (res.status !== 200) throw new Error(`node ${node.name} answered ${res.status}: ${res.text}`);
          done++;
          // A fresh session now and then, so the history each turn sends stays small.
          if (done % 50 === 0) await client.call(`${node.url}/api/agents/${agent}/session/reset`, 'POST', {});
        }
      } finally {
        client.close();
      }
      return done;
    }),
  );
  return counts.reduce((n, c) => n + c, 0);
}

export async function fleetThroughputBench(): Promise<Record<string, string>> {
  const fake = new FakeProvider().setFallback({ text: 'pong', usage: { input: 3, output: 1 } });
  await fake.start();
  const server = await startPostgres();
  buildOnce();
  const fleet = new Fleet({ databaseUrl: await server.createDatabase(), providerUrl: fake.url });
  try {
    const [a, b] = await Promise.all([fleet.start('a'), fleet.start('b')]);
    const agents = await Promise.all(Array.from({ length: CLIENTS }, (_, i) => spawnAgent(i % 2 ? a : b, `tp-${i}`)));
    await new Promise((r) => setTimeout(r, 1_000));
    // Warm both nodes (JIT, prepared statements, pools).
    await drive(
      agents.map((agent, i) => ({ node: i % 2 ? a : b, agent })),
      performance.now() + 3_000,
    );
    // A server named by TALON_TEST_POSTGRES_URL is not this process's child: its CPU is not counted.
    const pgCpuMs = () => (server.pid === undefined ? NaN : treeCpuMs(server.pid));
    const run = async (split: boolean) => {
      const cpu = { nodes: cpuMs(a.child.pid!) + cpuMs(b.child.pid!), pg: pgCpuMs() };
      const started = performance.now();
      const turns = await drive(
        agents.map((agent, i) => ({ node: split && i % 2 ? b : a, agent })),
        started + WINDOW_MS,
      );
      const seconds = (performance.now() - started) / 1000;
      const nodesCpu = cpuMs(a.child.pid!) + cpuMs(b.child.pid!) - cpu.nodes;
      const pgCpu = pgCpuMs() - cpu.pg;
      return { rate: turns / seconds, nodesPerTurn: nodesCpu / turns, pgPerTurn: pgCpu / turns };
    };
    const one = await run(false);
    const two = await run(true);
    const f = (n: number) => n.toFixed(1);
    return {
      'chat-completions turns/s, one node / two nodes': `${f(one.rate)} / ${f(two.rate)}`,
      'two nodes / one (target ≥ 1.6×)': `${(two.rate / one.rate).toFixed(2)}×`,
      'CPU per turn, nodes + PostgreSQL (ms), one node / two nodes': `${f(one.nodesPerTurn)} + ${f(one.pgPerTurn)} / ${f(two.nodesPerTurn)} + ${f(two.pgPerTurn)}`,
      'cores on this machine': String((await import('node:os')).availableParallelism()),
    };
  } finally {
    await fleet.stop();
    await fake.stop();
    await server.stop();
  }
}
