/**
 * The runtime's lease rules, on a lease table in memory (services/lease.ts has the SQL): a transient store failure while
 * taking the lease leaves the channel to be tried again (not run by nobody), and an adapter module reloaded while its
 * old connection is still stopping keeps the lease its new copy took (the old copy's release must not drop it). A
 * reset of the change feed restarts only the channels whose stored configuration changed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import type { ChangeFeed } from '@talon/module-sdk';
import type { NetFetch } from '@talon/net';
import type { ChannelAdapter, ChannelConnection } from '@talon/channels';
import type { ChannelLeases } from '../services/lease.ts';
import { Runtime } from '../services/runtime.ts';
import type { ChannelSettings, SettingsStore } from '../services/settings.ts';

const NODE = 'n1';

/** channels_leases in memory, for one node; `failTakes` makes the next takes throw as a busy database would. */
class MemoryLeases {
  readonly rows = new Map<string, string>();
  failTakes = 0;
  readonly node = NODE;
  async take(channel: string): Promise<boolean> {
    if (this.failTakes > 0 && this.failTakes--) throw new Error('SQLITE_BUSY: database is locked');
    const holder = this.rows.get(channel);
    if (holder && holder !== NODE) return false;
    this.rows.set(channel, NODE);
    return true;
  }
  async renew(channel: string): Promise<boolean> {
    return this.rows.get(channel) === NODE;
  }
  async holder(channel: string): Promise<string | undefined> {
    return this.rows.get(channel);
  }
  async release(channel: string): Promise<void> {
    if (this.rows.get(channel) === NODE) this.rows.delete(channel);
  }
  async releaseAll(): Promise<void> {
    for (const [channel, node] of this.rows) if (node === NODE) this.rows.delete(channel);
  }
  async forget(): Promise<string[]> {
    return [];
  }
}

const settings: ChannelSettings = {
  source: 'api',
  enabled: true,
  common: { dm_policy: 'open', group_policy: 'mention', allowed_users: [], owners: [] } as unknown as ChannelSettings['common'],
  fields: {},
  secrets: { token: 't' },
};

/** An adapter whose connections stop after `stopMs` (a real one closes its socket). */
function adapter(stopMs: number, started: string[], label: string): ChannelAdapter {
  return {
    name: 'fake',
    description: 'test',
    fields: { type: 'object', properties: {} },
    secretFields: [],
    urlFields: [],
    capabilities: {} as ChannelAdapter['capabilities'],
    limits: {} as ChannelAdapter['limits'],
    async start(ctx) {
      started.push(label);
      ctx.report('connected');
      const connection: ChannelConnection = {
        send: async () => ({ messageId: '1' }),
        stop: () => new Promise((resolve) => setTimeout(resolve, stopMs)),
      };
      return connection;
    },
  } as ChannelAdapter;
}

/** Lets a restart the tick queued finish. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

function runtime(
  leases: MemoryLeases,
  adapters: () => ChannelAdapter[],
  changes: ChangeFeed = { note: async () => undefined, on: () => undefined },
  stored: () => ChannelSettings = () => settings,
): Runtime {
  return new Runtime({
    adapters,
    settings: { get: async () => stored() } as unknown as SettingsStore,
    leases: leases as unknown as ChannelLeases,
    changes,
    net: () => ({}) as NetFetch,
    log: pino({ level: 'silent' }),
    signal: new AbortController().signal,
    emit: async () => ({ duplicate: false }),
    onState: () => undefined,
    startBackoff: { baseMs: 20, capMs: 40 },
  });
}

/** An adapter whose first `failures` starts throw `error` (a ChannelError of `kind`, or a plain Error). */
function failing(failures: number, kind: 'auth' | 'transient' | undefined, started: string[]): ChannelAdapter {
  const ok = adapter(0, started, 'ok');
  return {
    ...ok,
    async start(ctx) {
      if (started.length < failures) {
        started.push('failed');
        const err = new Error(`start failed ${started.length}`);
        throw kind ? Object.assign(err, { name: 'ChannelError', kind }) : err;
      }
      return ok.start(ctx);
    },
  };
}

test('a store failure while taking the lease: the next tick tries again and the channel runs', async () => {
  const leases = new MemoryLeases();
  const started: string[] = [];
  const a = adapter(0, started, 'a');
  const rt = runtime(leases, () => [a]);
  leases.failTakes = 1;
  assert.equal(await rt.restart('fake'), false);
  assert.equal(rt.get('fake')!.state, 'error');
  assert.match(rt.get('fake')!.lastError ?? '', /lease could not be taken/);
  await rt.tick();
  await settle();
  assert.equal(rt.get('fake')!.state, 'connected', 'run by nobody after one failed take');
  assert.deepEqual(started, ['a']);
  await rt.stopAll();
});

test('a store failure while retaking a held lease: no lease is kept for an adapter that does not run', async () => {
  const leases = new MemoryLeases();
  const started: string[] = [];
  const a = adapter(0, started, 'a');
  const rt = runtime(leases, () => [a]);
  assert.equal(await rt.restart('fake'), true);
  leases.failTakes = 1;
  assert.equal(await rt.restart('fake'), false);
  assert.equal(rt.get('fake')!.held, false, 'a lease renewed for an adapter that is not running keeps every process off it');
  await rt.tick();
  await settle(); // a lease left unrenewed ends; here the table has none
  await rt.tick();
  await settle();
  assert.equal(rt.get('fake')!.state, 'connected');
  await rt.stopAll();
});

test('an adapter module reloaded while its old connection stops: the new copy keeps its lease', async () => {
  const leases = new MemoryLeases();
  const started: string[] = [];
  let current = adapter(50, started, 'old');
  const rt = runtime(leases, () => [current]);
  assert.equal(await rt.restart('fake'), true);
  current = adapter(50, started, 'new');
  await rt.startAll();
  await new Promise((resolve) => setTimeout(resolve, 120)); // the old connection's stop has ended
  assert.equal(leases.rows.get('fake'), NODE, "the old copy's release dropped the new copy's lease");
  await rt.tick();
  const r = rt.get('fake')!;
  assert.equal(r.state, 'connected');
  assert.equal(r.adapter, current);
  assert.deepEqual(started, ['old', 'new'], 'one start per copy');
  await rt.stopAll();
});

/** A runtime over a fresh lease table whose adapter's first `failures` starts fail. */
function failingRuntime(failures: number, kind: 'auth' | 'transient' | undefined) {
  const leases = new MemoryLeases();
  const started: string[] = [];
  const a = failing(failures, kind, started);
  return { leases, started, rt: runtime(leases, () => [a]) };
}

for (const kind of ['transient', undefined] as const) {
  test(`an adapter whose start fails (${kind ?? 'plain error'}): its lease goes and the start is retried with backoff`, async () => {
    const { leases, started, rt } = failingRuntime(2, kind);
    assert.equal(await rt.restart('fake'), false);
    const r = rt.get('fake')!;
    assert.equal(r.state, 'error');
    assert.match(r.lastError ?? '', /start failed 1/);
    assert.equal(r.held, false);
    assert.equal(leases.rows.get('fake'), undefined, 'the lease kept a standby process off a channel nobody runs');
    const deadline = Date.now() + 2000;
    while (rt.get('fake')!.state !== 'connected' && Date.now() < deadline) await settle();
    assert.equal(rt.get('fake')!.state, 'connected', 'never retried');
    assert.deepEqual(started, ['failed', 'failed', 'ok']);
    assert.equal(leases.rows.get('fake'), NODE);
    await rt.stopAll();
  });
}

test('an adapter whose start fails with an auth error: its lease goes, it stays in error, and neither retry, tick nor another module loading restarts it', async () => {
  const { leases, started, rt } = failingRuntime(1, 'auth');
  assert.equal(await rt.restart('fake'), false);
  assert.equal(leases.rows.get('fake'), undefined);
  await new Promise((resolve) => setTimeout(resolve, 150)); // several backoffs
  await rt.tick();
  // What the channels module does when any module is loaded.
  assert.deepEqual(await rt.startAll(), []);
  await settle();
  const r = rt.get('fake')!;
  assert.equal(r.state, 'error');
  assert.match(r.lastError ?? '', /start failed 1/);
  assert.deepEqual(started, ['failed'], 'an auth error was retried');
  await rt.stopAll();
});

test('a pending retry of a failed start is dropped when the channel stops', async () => {
  const { started, rt } = failingRuntime(1, 'transient');
  assert.equal(await rt.restart('fake'), false);
  await rt.stop('fake');
  await new Promise((resolve) => setTimeout(resolve, 150));
  assert.deepEqual(started, ['failed'], 'a stopped channel started again');
  assert.equal(rt.get('fake')!.connection, undefined);
});

test("a reset of the change feed ('': notes may have been missed) restarts only the channels whose stored configuration changed", async () => {
  const started: string[] = [];
  const a = adapter(0, started, 'a');
  let heard: ((key: string) => unknown) | undefined;
  let stored = settings;
  const changes: ChangeFeed = { note: async () => undefined, on: (_topic, handler) => void (heard = handler) };
  const rt = runtime(
    new MemoryLeases(),
    () => [a],
    changes,
    () => stored,
  );
  assert.equal(await rt.restart('fake'), true);
  await heard!('');
  assert.deepEqual(started, ['a'], 'the same configuration: left running');
  stored = { ...settings, fields: { greeting: 'hi' } };
  await heard!('');
  assert.deepEqual(started, ['a', 'a'], 'restarted with the stored configuration');
});
