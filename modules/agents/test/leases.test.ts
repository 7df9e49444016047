/**
 * Session leases on two connections to one database file (two processes): order, release, takeover. With
 * TALON_TEST_DB=postgres the "processes" share one PostgreSQL database, their statements side by side on its pool.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import type { ChangeFeed } from '@talon/module-sdk';
import { openPostgresTestStore, openTestStore, waitFor, type TestStore } from '@talon/testing';
import { SessionLeases, type LeaseTurn } from '../services/leases.ts';
import { TraceStore } from '../services/traces.ts';

const MODULE = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const log = pino({ level: 'silent' });

/** A change feed between the "processes" of a test: a note reaches every other one at once. */
function feeds() {
  const all: Array<Map<string, (key: string) => unknown>> = [];
  return () => {
    const mine = new Map<string, (key: string) => unknown>();
    all.push(mine);
    const feed: ChangeFeed = {
      note: async (topic, key = '') => {
        for (const other of all) if (other !== mine) setImmediate(() => void other.get(topic)?.(key));
      },
      on: (topic, handler) => void mine.set(topic, handler),
    };
    return feed;
  };
}

async function processes(count: number) {
  let stores: Array<TestStore['store']>;
  let close: () => Promise<void>;
  if (process.env.TALON_TEST_DB === 'postgres') {
    const opened = await openPostgresTestStore([MODULE]);
    stores = Array.from({ length: count }, () => opened.store);
    close = () => opened.close();
  } else {
    const first = openTestStore([MODULE]);
    const opened: TestStore[] = [first];
    for (let i = 1; i < count; i++) opened.push(openTestStore([], first.file));
    stores = opened.map((s) => s.store);
    close = async () => opened.reverse().forEach((s) => s.close());
  }
  const feed = feeds();
  const nodes = stores.map((store, i) => {
    const traces = new TraceStore(store, log);
    return { store, traces, leases: new SessionLeases({ store, changes: feed(), node: `node-${i}`, traces, log }) };
  });
  return { nodes, close };
}

let seq = 0;
const turn = (id: string, sessionId = 's1'): LeaseTurn => ({ id, sessionId, agentId: 'a1', origin: 'http', arrivedAt: Date.now(), seq: ++seq });
const never = new AbortController().signal;
/** Resolves once the turn waits in its session's queue (its ticket is written). */
const queued = (store: TestStore['store'], turnId: string) =>
  waitFor(() => store.one('SELECT 1 AS n FROM agents_session_waits WHERE turn_id = ?', [turnId]), 3000, `the ticket of ${turnId}`);
/** Every wait of these tests is bounded: a turn that should hold the session by now fails the test instead. */
function within<T>(work: Promise<T>, ms = 3000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`not within ${ms} ms`)), ms)));
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

test('turns of one session hold it one after another, in arrival order across processes', async () => {
  const { nodes, close } = await processes(2);
  const [a, b] = nodes;
  try {
    const order: string[] = [];
    const t1 = turn('t1');
    await a.leases.acquire(t1, never);
    // t2 arrives on B, then t3 on A: A's own next turn must not overtake B's.
    const t2 = b.leases.acquire(turn('t2'), never).then(() => order.push('t2'));
    await queued(b.store, 't2');
    const t3 = a.leases.acquire(turn('t3'), never).then(() => order.push('t3'));
    await queued(a.store, 't3');
    assert.deepEqual(order, [], 'both wait while t1 holds the session');
    a.leases.release(t1);
    await within(t2);
    assert.deepEqual(order, ['t2']);
    b.leases.release({ id: 't2', sessionId: 's1' });
    await within(t3);
    assert.deepEqual(order, ['t2', 't3']);
    a.leases.release({ id: 't3', sessionId: 's1' });
    await a.leases.flush();
    assert.equal(await a.leases.ofSession('s1'), undefined);
  } finally {
    await close();
  }
});

test('a turn that gives up waiting leaves the queue (the turn behind it is not held up)', async () => {
  const { nodes, close } = await processes(2);
  const [a, b] = nodes;
  try {
    const t1 = turn('t1');
    await a.leases.acquire(t1, never);
    const stopping = new AbortController();
    const gaveUp = assert.rejects(b.leases.acquire(turn('t2'), stopping.signal), /stopping/);
    await queued(b.store, 't2');
    const t3 = a.leases.acquire(turn('t3'), never);
    stopping.abort();
    await within(gaveUp);
    a.leases.release(t1);
    await within(t3);
    assert.equal((await a.leases.ofSession('s1'))?.turnId, 't3');
  } finally {
    await close();
  }
});

test("a dead process's turns are taken over by exactly one process, recorded as interrupted, and its tickets dropped", async () => {
  const { nodes, close } = await processes(3);
  const [dead, b, c] = nodes;
  try {
    await dead.leases.acquire(turn('lost-1', 's1'), never);
    await dead.leases.acquire(turn('lost-2', 's2'), never);
    // A turn of the dead process was waiting for s1 (its ticket; the process is gone, so nothing acts on it).
    await dead.store.run("INSERT INTO agents_session_waits (turn_id, session_id, node, arrived_at, seq) VALUES ('queued', 's1', 'node-0', ?, 1)", [Date.now()]);
    const [byB, byC] = await Promise.all([b.leases.takeOver('node-0'), c.leases.takeOver('node-0')]);
    assert.equal(byB.length + byC.length, 2, 'both turns taken over once');
    assert.ok(byB.length === 0 || byC.length === 0, 'by one process');
    const traces = await b.traces.recent('a1', 10);
    assert.deepEqual(traces.map((t) => [t.turn_id, t.outcome]).sort(), [
      ['lost-1', 'interrupted'],
      ['lost-2', 'interrupted'],
    ]);
    assert.match(traces[0].error ?? '', /node-0\) was lost/);
    assert.equal(await b.store.one('SELECT turn_id FROM agents_session_waits'), undefined, 'its ticket went');
    // The session is free for the live processes.
    await b.leases.acquire(turn('next', 's1'), never);
    assert.equal((await c.leases.ofSession('s1'))?.node, 'node-1');
  } finally {
    await close();
  }
});

test('at start, leases and tickets of processes that are not live are taken over', async () => {
  const { nodes, close } = await processes(2);
  const [ghost, b] = nodes;
  try {
    await ghost.leases.acquire(turn('ghost-turn'), never);
    await b.leases.sweep(['node-1']);
    assert.equal(await b.leases.ofSession('s1'), undefined);
    assert.equal((await b.traces.one('ghost-turn'))?.outcome, 'interrupted');
    // A live owner is left alone.
    await b.leases.acquire(turn('mine'), never);
    await b.leases.sweep(['node-1']);
    assert.equal((await b.leases.ofSession('s1'))?.turnId, 'mine');
  } finally {
    await close();
  }
});

test('processes that try to take a free session at the same moment: one holds it, the others wait their turn', async () => {
  const { nodes, close } = await processes(4);
  try {
    for (let round = 0; round < 5; round++) {
      const session = `race-${round}`;
      const holding: string[] = [];
      const acquired = nodes.map((n, i) => n.leases.acquire(turn(`r${round}-${i}`, session), never).then(() => holding.push(`r${round}-${i}`)));
      await waitFor(() => holding.length > 0, 3000, 'a holder');
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(holding.length, 1, `round ${round}: one turn holds the session (${holding.join(', ')})`);
      // Each releases in turn; every turn gets the session, one at a time.
      for (let done = 1; done <= nodes.length; done++) {
        const holder = holding[done - 1];
        assert.equal((await nodes[0].leases.ofSession(session))?.turnId, holder);
        nodes[Number(holder.split('-')[1])].leases.release({ id: holder, sessionId: session });
        if (done < nodes.length) await within(new Promise<void>((resolve) => void waitFor(() => holding.length > done, 3000).then(() => resolve())));
      }
      await within(Promise.all(acquired));
    }
  } finally {
    await close();
  }
});
