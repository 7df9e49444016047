/**
 * The fleet test (issue 30): one real PostgreSQL, two service processes (`npm start`'s build) with their own homes on a
 * fresh database, sharing a data directory and a secret key file; the scripted fake provider answers each turn in 1–3 s.
 * A driver sends each request to a random live node for about 45 s: 300 one-shot schedules spread over 40 s, 100 agent
 * spawns (each a webhook delivery to a local receiver; 60 of them fire a trigger made on the other node, a background
 * turn), 30 chat turns (half streamed and attached from the other node), 20 agents created on one node and used at once
 * on the other. At 15 s one node is killed with SIGKILL; at 30 s it is started again. The counts are the issue's: a
 * 2-core machine runs them in about two minutes, so none is scaled down.
 *
 * Asserted: both nodes starting at once on the empty database migrate once; no schedule slot, background turn or chat
 * turn reaches the provider twice, except one the killed node had in flight (the takeover runs it again); no webhook id
 * arrives twice beyond the killed node's in-flight leases; every slot ends ok, error or lost with a record; every
 * queued turn the killed node held runs again within the lease plus a beat; every turn the killed node owned ends
 * `interrupted`, and its attachers on the other node get a final event, none hangs; an agent created on either node
 * answers on the other within 1 s; the trigger made on one node fires for spawns on both; every provider call carries
 * the user message of its turn. It prints the counters (duplicates, lost runs, takeover seconds, event fan-out lag)
 * and fails on any duplicate.
 *
 * It runs in the PostgreSQL pass of the suite (TALON_TEST_DB=postgres; `.ci/run` runs the suite twice): the SQLite
 * pass would run the same fleet on the same engine a second time.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { FakeProvider, postgresMissing, startPostgres, waitFor, type PostgresServer } from '@talon/testing';
import { buildOnce, call, Fleet, lastUserText, readSse, spawnAgent, type FleetNode, type SseEvent } from './nodes.ts';
import { AgentsWatch, inFlightAt, runsOf, startReceiver, type Delivery } from './observe.ts';
import { percentile } from '../../bench/util.ts';

const skip =
  postgresMissing() ?? (process.env.TALON_TEST_DB === 'postgres' ? undefined : 'the fleet test runs in the PostgreSQL pass (TALON_TEST_DB=postgres)');

const SLOTS = 300;
const SLOTS_OVER_MS = 40_000;
const BACKGROUND = 60;
const HOOK_ONLY = 20;
const CHATS = 30;
const CROSS = 20;
const KILL_AT = 15_000;
const RESTART_AT = 30_000;
const DRIVE_MS = 45_000;
/** The nodes' heartbeat is 3 s: a node silent for a lease (three beats) is dead; another beat notices it. */
const LEASE_MS = 9_000;
const BEAT_MS = 3_000;

let server: PostgresServer | undefined;
let fleet: Fleet | undefined;
const fake = new FakeProvider();
let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;
const watches = { a: new AgentsWatch(), b: new AgentsWatch() };

/** Replies of 1–3 s (a few seconds' worth queued ahead; the driver tops them up). */
function topUp(): void {
  while (fake.pending < 300) fake.enqueue({ text: 'done', delayMs: 1_000 + Math.floor(Math.random() * 2_000) });
}

before(async () => {
  if (skip) return;
  await fake.start();
  topUp();
  receiver = await startReceiver();
  server = await startPostgres();
  buildOnce();
  fleet = new Fleet({
    databaseUrl: await server.createDatabase(),
    providerUrl: fake.url,
    config: [
      '[webhooks]',
      'allow_hosts = ["127.0.0.1"]',
      'retry_base_ms = 50',
      '[tasks.lanes]',
      'schedule = 64',
      'trigger = 64',
      '[agents_ws]',
      'agents_updated_interval_ms = 600000',
    ],
  });
});

after(async () => {
  watches.a.close();
  watches.b.close();
  await fleet?.stop();
  receiver?.close();
  await fake.stop();
  await server?.stop();
});

const sleepUntil = (at: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, at - performance.now())));
const shuffle = <T>(items: T[]) => items.sort(() => Math.random() - 0.5);

test('a fleet of two nodes on one PostgreSQL: nothing done twice, nothing lost when a node dies', { skip, timeout: 200_000 }, async () => {
  const f = fleet!;
  const started = Date.now();
  // Both at once on the empty database.
  const [a, b] = await Promise.all([f.start('a'), f.start('b')]);
  const ledger = new pg.Client({ connectionString: f.databaseUrl! });
  await ledger.connect();
  try {
    const { rows } = await ledger.query<{ n: string; d: string }>('SELECT COUNT(*) AS n, COUNT(DISTINCT (module, id)) AS d FROM kernel_migrations');
    assert.equal(rows[0].n, rows[0].d, 'each migration recorded once');
    assert.ok(Number(rows[0].n) > 50, `the ledger holds every module's migrations (${rows[0].n})`);
  } finally {
    await ledger.end();
  }
  for (const node of [a, b]) assert.doesNotMatch(node.output.join(''), /relation "[^"]+" already exists/, `node ${node.name} raced a migration`);

  // The agents the work runs on, made before the webhook so their spawns are not deliveries.
  const clock = await spawnAgent(a, 'clock');
  const watcher = await spawnAgent(b, 'watcher');
  const chatAgents = await Promise.all(Array.from({ length: CHATS }, (_, i) => spawnAgent(i % 2 ? a : b, `chat-${i}`)));
  await waitFor(async () => (await call(a, `/api/agents/${chatAgents[0]}`)).status === 200, 5_000, 'the chat agents on both nodes');
  const trigger = await call<{ error?: string }>(a, '/api/triggers', {
    agent_id: watcher,
    pattern: { agent_spawned: { name_pattern: 'bg-*' } },
    prompt_template: 'background turn for {{event}}',
    cooldown_secs: 0,
    session_mode: 'new',
  });
  assert.equal(trigger.status, 201, trigger.body.error);
  const hook = await call<{ error?: string }>(b, '/api/webhooks', { name: 'spawns', url: receiver!.url, events: ['agent_spawned'] });
  assert.equal(hook.status, 201, hook.body.error);
  await Promise.all([watches.a.open(a, clock), watches.b.open(b, clock)]);
  // Each node hears of the other's trigger and webhook through the change feed.
  await new Promise((resolve) => setTimeout(resolve, 1_000));

  const t0 = performance.now();
  const firstSlot = Date.now() + 3_000;
  const jobs = await Promise.all(
    Array.from({ length: SLOTS }, async (_, i) => {
      const res = await call<{ id: string; error?: string }>(i % 2 ? b : a, '/api/schedules', {
        name: `slot-${i}`,
        agent_id: clock,
        cron: `at ${new Date(firstSlot + Math.floor((i * SLOTS_OVER_MS) / SLOTS)).toISOString()}`,
        prompt: `scheduled slot-${i}.`,
        session_mode: 'new',
      });
      assert.equal(res.status, 201, res.body.error);
      return res.body.id;
    }),
  );

  // The driver: each request to a random node that is up; what a kill cuts off is noted, not failed.
  const ready = new Set<FleetNode>([a, b]);
  const pick = () => shuffle([...ready])[0];
  const other = (node: FleetNode) => (node === a ? b : a);
  const cut = new Set<string>();
  const failures: string[] = [];
  // A request fails "cut" when a node it involves was killed meanwhile; on live nodes it is a failure.
  const attempt = async (item: string, node: FleetNode, work: () => Promise<unknown>, also?: FleetNode) => {
    const killsBefore = kills;
    try {
      await work();
    } catch (err) {
      const involved = [node, ...(also ? [also] : [])];
      if (kills === killsBefore && involved.every((n) => n.up && ready.has(n))) failures.push(`${item} on ${node.name}: ${(err as Error).message}`);
      else cut.add(item);
    }
  };
  const work: Array<{ at: number; run: () => Promise<unknown> }> = [];
  const when = () => 1_000 + Math.random() * (DRIVE_MS - 2_000);

  const spawned = new Map<string, FleetNode>();
  const spawnedAt = new Map<string, number>();
  const spawn = (name: string) => async () => {
    const node = pick();
    await attempt(name, node, async () => {
      await spawnAgent(node, name);
      spawned.set(name, node);
      spawnedAt.set(name, performance.now());
    });
  };
  for (let i = 0; i < BACKGROUND; i++) work.push({ at: when(), run: spawn(`bg-${i}`) });
  for (let i = 0; i < HOOK_ONLY; i++) work.push({ at: when(), run: spawn(`hook-${i}`) });

  interface Chat {
    node?: FleetNode;
    streamed: boolean;
    started?: boolean;
    reply?: { ended: boolean; events: SseEvent[] } | { status: number };
    attach?: { node: FleetNode; ended: boolean; broken: boolean; events: SseEvent[] };
  }
  const chats: Chat[] = Array.from({ length: CHATS }, (_, i) => ({ streamed: i % 2 === 1 }));
  chats.forEach((chat, i) =>
    work.push({
      at: when(),
      run: async () => {
        const node = (chat.node = pick());
        const path = `/api/agents/${chatAgents[i]}`;
        await attempt(`chat-${i}`, node, async () => {
          if (!chat.streamed) {
            chat.reply = await call(node, `${path}/message`, { message: `chat-${i} turn` });
            return;
          }
          const res = await fetch(`${node.url}${path}/message/stream`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ message: `chat-${i} turn` }),
          });
          chat.started = res.status === 200;
          // The stream is open: the turn runs on `node`; its other node follows it by an attach (relayed there).
          const watcher = other(node);
          const attached = ready.has(watcher)
            ? fetch(`${watcher.url}${path}/attach`).then(async (r) => ({ node: watcher, ...(await readSse(r, 60_000)) }))
            : undefined;
          chat.reply = await readSse(res, 60_000);
          if (attached) chat.attach = await attached.catch(() => undefined);
          if (!chat.reply.ended) throw new Error('the stream broke');
        });
      },
    }),
  );

  // Agents made on one node and used at once on the other, while both are up: before the kill and after the restart.
  const cross: Array<{ name: string; visibleMs?: number; fanoutMs?: number; status?: number; response?: string }> = [];
  const unheard: string[] = [];
  const crossOne = async (i: number) => {
    const maker = pick();
    const user = other(maker);
    const name = `cross-${i}`;
    await attempt(
      name,
      maker,
      async () => {
        const id = await spawnAgent(maker, name);
        spawned.set(name, maker);
        const made = performance.now();
        const result: (typeof cross)[number] = { name };
        cross.push(result);
        await waitFor(async () => (await call(user, `/api/agents/${id}`)).status === 200, 5_000, `${name} on node ${user.name}`);
        result.visibleMs = performance.now() - made;
        const reply = await call<{ response?: string; error?: string }>(user, `/api/agents/${id}/message`, { message: `${name} hello` });
        result.status = reply.status;
        result.response = reply.body.response ?? reply.body.error;
        // The fan-out lag is measured, not asserted here (the issue sets it as a bench target); one never heard is counted.
        const seen = await waitFor(() => watches[user.name as 'a' | 'b'].seen.get(id), 3_000).catch(() => undefined);
        if (seen === undefined) unheard.push(`${name} (made on ${maker.name} at ${((made - t0) / 1000).toFixed(1)} s)`);
        else result.fanoutMs = seen - made;
      },
      user,
    );
  };
  for (let i = 0; i < CROSS / 2; i++) work.push({ at: 1_000 + Math.random() * (KILL_AT - 3_000), run: () => crossOne(i) });

  const inFlight = { at: Infinity };
  let kills = 0;
  const lifecycle = (async () => {
    await sleepUntil(t0 + KILL_AT);
    ready.delete(a);
    inFlight.at = performance.now();
    kills++;
    await f.kill('a');
    await sleepUntil(t0 + RESTART_AT);
    await f.start('a');
    await watches.a.open(a, clock);
    ready.add(a);
    await Promise.all(Array.from({ length: CROSS / 2 }, (_, j) => sleepUntil(performance.now() + Math.random() * 8_000).then(() => crossOne(CROSS / 2 + j))));
  })();
  const topper = setInterval(topUp, 200);
  const running: Promise<unknown>[] = [lifecycle];
  for (const item of work.sort((x, y) => x.at - y.at)) {
    await sleepUntil(t0 + item.at);
    running.push(item.run());
  }
  await Promise.all(running);

  // Everything settles: every slot has its record, every spawn its delivery and background turn.
  const expectedHooks = [...spawned.keys()];
  // A spawn the killed node answered just before it died may have taken its trigger fire with it: the event lives in
  // that process until the fire is committed (no outbox). Those are counted, not expected to run.
  const diedWith = (n: string) => spawned.get(n) === a && spawnedAt.get(n)! > inFlight.at - 2_000 && spawnedAt.get(n)! <= inFlight.at;
  const backgrounds = [...spawned.keys()].filter((n) => n.startsWith('bg-') && !diedWith(n));
  const firesAtRisk = [...spawned.keys()].filter((n) => n.startsWith('bg-') && diedWith(n));
  type Run = { state: string; node: string; error?: string | null };
  const slotRuns = async () => Promise.all(jobs.map(async (id) => (await call<Run[]>(b, `/api/schedules/${id}/runs`)).body));
  await waitFor(async () => (await slotRuns()).every((runs) => runs.length >= 1 && runs.every((r) => r.state !== 'running')), 60_000, 'every slot to end');
  const deliveredNames = () => new Set(expectedHooks.filter((name) => receiver!.received.some((d) => d.body.includes(`"${name}"`))));
  await waitFor(() => deliveredNames().size === expectedHooks.length, 30_000, 'a delivery for every spawn').catch((err: Error) => failures.push(err.message));
  const unrun = () => backgrounds.filter((n) => !runsOf(fake.requests, `'${n}'`).completed.length);
  await waitFor(() => !unrun().length, 30_000, 'every background turn').catch(async (err: Error) => {
    const where = unrun().map((n) => `${n} (spawned on ${spawned.get(n)!.name} at ${((spawnedAt.get(n)! - t0) / 1000).toFixed(1)} s)`);
    failures.push(`${err.message}; not run: ${where.join(', ')}`);
  });
  // Every background turn that ran has its delivery: a fire the kill cut off is resumed on the live node.
  type TurnDelivery = { status: string; cause: string | null };
  const watcherDeliveries = async () => (await call<{ deliveries: TurnDelivery[] }>(b, `/api/agents/${watcher}/deliveries?limit=200`)).body.deliveries;
  const ranBackground = [...spawned.keys()].filter((n) => n.startsWith('bg-') && runsOf(fake.requests, `'${n}'`).completed.length);
  const deliveriesFor = (list: TurnDelivery[], n: string) => list.filter((d) => d.cause?.includes(`'${n}'`));
  await waitFor(
    async () => {
      const list = await watcherDeliveries();
      return ranBackground.every((n) => deliveriesFor(list, n).length) || undefined;
    },
    30_000,
    'a delivery for every background turn that ran',
  ).catch((err: Error) => failures.push(err.message));
  // Anything done twice would show within this.
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const backgroundDeliveries = await watcherDeliveries();
  clearInterval(topper);

  // Runs per item: a second provider call is allowed only for a call the killed node had in flight.
  const duplicates: string[] = [];
  let reruns = 0;
  let takeoverMs = 0;
  const count = (marker: string) => {
    const runs = runsOf(fake.requests, marker);
    const first = runs.requests[0];
    const again = runs.requests.slice(1);
    if (!again.length) return;
    if (first && inFlightAt(first, inFlight.at) && again.length === 1) {
      reruns++;
      takeoverMs = Math.max(takeoverMs, again[0].startedAt! - inFlight.at);
    } else duplicates.push(`${marker} reached the provider ${runs.requests.length} times`);
  };
  for (let i = 0; i < SLOTS; i++) count(`scheduled slot-${i}.`);
  for (const name of backgrounds) count(`'${name}'`);
  for (let i = 0; i < CHATS; i++) count(`chat-${i} turn`);
  for (let i = 0; i < CROSS; i++) count(`cross-${i} hello`);

  const byId = new Map<string, Delivery[]>();
  for (const d of receiver!.received) byId.set(d.id, [...(byId.get(d.id) ?? []), d]);
  const hookDuplicates = [...byId.values()].filter((ds) => ds.length > 1 && !(ds.length === 2 && ds[0].at <= inFlight.at && ds[0].at > inFlight.at - 2_000));

  const states: Record<string, number> = {};
  const runs = await slotRuns();
  for (const slot of runs) for (const run of slot) states[run.state] = (states[run.state] ?? 0) + 1;
  const slotErrors = runs.flat().flatMap((r) => (r.error ? [r.error] : []));

  // Turns the killed node owned: each chat whose provider call it cut off.
  const interrupted = (await call<{ turns: Array<{ agent_id: string }> }>(b, '/api/turns?outcome=interrupted&limit=200')).body.turns;
  const owned = [...chats.keys()].filter((i) => runsOf(fake.requests, `chat-${i} turn`).requests.some((r) => r.aborted));

  // Every provider call carries the user message of the turn it serves (a turn's history read without it would not).
  const markers = /scheduled slot-\d+\.|background turn for|chat-\d+ turn|cross-\d+ hello/;
  const blind = fake.requests.filter((r) => !markers.test(lastUserText(r.body)));

  const fanout = cross.map((c) => c.fanoutMs).filter((ms): ms is number => ms !== undefined);
  console.log(
    [
      `# talon_runs_duplicate_total ${duplicates.length + hookDuplicates.length}`,
      `# talon_runs_lost_total ${states.lost ?? 0}`,
      `# takeover seconds ${(takeoverMs / 1000).toFixed(1)} (${reruns} calls the killed node had in flight ran again)`,
      `# event fan-out lag p50 ${percentile(fanout, 50).toFixed(0)} ms, p99 ${percentile(fanout, 99).toFixed(0)} ms (${fanout.length} agents; never heard on the other node: ${unheard.join(', ') || 'none'})`,
      `# slots ${JSON.stringify(states)} ${slotErrors.slice(0, 3).join('; ')}; webhook deliveries ${receiver!.received.length} (${byId.size} ids); cut by the kill: ${[...cut].join(', ') || 'none'}; spawned on the killed node within 2 s of its death: ${firesAtRisk.map((n) => `${n} (${runsOf(fake.requests, `'${n}'`).requests.length ? 'fired' : 'not fired'})`).join(', ') || 'none'}`,
      `# turns owned by the killed node: ${owned.length}, recorded interrupted: ${interrupted.length}; provider calls without their user message: ${blind.length}; run took ${((Date.now() - started) / 1000).toFixed(0)} s`,
    ].join('\n'),
  );

  // Every property is checked, and all that fail are reported together (one defect often shows in several).
  const problems: string[] = [];
  const check = (ok: unknown, problem: string) => void (ok || problems.push(problem));
  check(!duplicates.length, `work items that ran twice: ${duplicates.join('; ')}`);
  check(!hookDuplicates.length, `webhook ids received twice beyond the in-flight ones: ${hookDuplicates.map((ds) => ds[0].id).join(', ')}`);
  check(
    !blind.length,
    `${blind.length} of ${fake.requests.length} provider calls lacked their turn's user message (a background turn's also shows below as not run)`,
  );
  for (const failure of failures) problems.push(`a request to a live node failed: ${failure}`);
  check(
    runs.every((slot) => slot.length === 1),
    `slots without exactly one run record: ${JSON.stringify(runs.filter((slot) => slot.length !== 1))}`,
  );
  const misdelivered = ranBackground.filter(
    (n) =>
      deliveriesFor(backgroundDeliveries, n)
        .map((d) => d.status)
        .join() !== 'kept',
  );
  check(!misdelivered.length, `background turns without exactly one delivery, kept: ${misdelivered.join(', ')}`);
  check((states.ok ?? 0) + (states.error ?? 0) + (states.lost ?? 0) === SLOTS, `not every slot ended ok, error or lost: ${JSON.stringify(states)}`);
  check(
    takeoverMs <= LEASE_MS + BEAT_MS + 3_000,
    `the killed node's queued turns ran again only after ${takeoverMs} ms (a lease and a beat: ${LEASE_MS + BEAT_MS} ms)`,
  );
  for (const i of owned)
    check(
      interrupted.some((t) => t.agent_id === chatAgents[i]),
      `chat-${i}, cut off on the killed node, is not recorded as interrupted`,
    );
  // An attacher on the node that was killed lost its connection with it; every other one ends with a final event.
  for (const [i, chat] of chats.entries()) {
    const attach = chat.attach;
    if (!attach || (attach.node === a && attach.broken)) continue;
    const last = attach.events.at(-1);
    check(attach.ended, `chat-${i}'s attach on node ${attach.node.name} did not end (its turn ran on ${chat.node?.name})`);
    check(last && ['done', 'error'].includes(last.name), `chat-${i}'s attach got no final event: ${JSON.stringify(attach.events.slice(-2))}`);
  }
  for (const c of cross) {
    // One whose node was killed under it (a step of it still going at 15 s) is cut, like every other item.
    if (cut.has(c.name)) continue;
    check(c.visibleMs !== undefined && c.visibleMs <= 1_000, `${c.name} answered on the other node only after ${c.visibleMs} ms`);
    check(c.status === 200, `${c.name}'s message on the other node: ${c.status} ${c.response}`);
  }
  check(new Set(backgrounds.map((n) => spawned.get(n)!.name)).size === 2, 'background turns did not fire for spawns on both nodes');
  assert.deepEqual(problems, []);
});
