/**
 * The runtime's lease rules, on a lease table in memory (services/lease.ts has the SQL): a transient store failure while
 * taking the lease leaves the channel to be tried again (not run by nobody), and an adapter module reloaded while its
 * old connection is still stopping keeps the lease its new copy took (the old copy's release must not drop it).
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

function runtime(leases: MemoryLeases, adapters: () => ChannelAdapter[]): Runtime {
  const changes: ChangeFeed = { note: async () => undefined, on: () => undefined };
  return new Runtime({
    adapters,
    settings: { get: async () => settings } as unknown as SettingsStore,
    leases: leases as unknown as ChannelLeases,
    changes,
    net: () => ({}) as NetFetch,
    log: pino({ level: 'silent' }),
    signal: new AbortController().signal,
    emit: async () => ({ duplicate: false }),
    onState: () => undefined,
  });
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
