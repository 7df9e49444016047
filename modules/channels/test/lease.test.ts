/**
 * One process runs a channel: two kernels on one home (one database), the in-memory fake adapter in each. Only the
 * process holding the channel's lease starts the adapter; the other shows `standby` naming the holder; configure,
 * enable and disable sent to the standby process reach the holder through the change feed; an adapter whose lease
 * another process took stops at once; when the holder dies, the standby process takes over and messages flow again.
 */
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeProvider, startAgentTestKernel, waitFor, type AgentTestKernel } from '@talon/testing';
import { fixtures } from './helpers.ts';
import { TEST_TEXT } from '../routes/channels.ts';

interface Detail {
  state: string;
  connected: boolean;
  holder: string | null;
  started_at: string | null;
  config: Record<string, unknown> | null;
}

const ONLY = ['agents', 'auth', 'error-envelope', 'secrets', 'net', 'tasks', 'commands', 'bindings', 'channels', 'channel-fake'];
const CONFIG = `module_paths = ["${fixtures}"]\n`;

describe('channels: one process runs a channel', () => {
  const fake = new FakeProvider();
  let a: AgentTestKernel;
  let b: AgentTestKernel;
  before(async () => {
    await fake.start();
    // A lease of 750 ms: short enough for a quick takeover, long enough that a stall of this busy test process (two
    // kernels in one event loop) does not let the standby take a live holder's lease.
    const options = { only: ONLY, config: CONFIG, fake, heartbeatMs: 250, feedPollMs: 50 };
    a = await startAgentTestKernel({ ...options, keepHome: true });
    b = await startAgentTestKernel({ ...options, home: a.home });
  });
  after(async () => {
    await b?.stop();
    await a?.stop();
    await fake.stop();
    if (a) rmSync(a.home, { recursive: true, force: true });
  });

  const detail = async (k: AgentTestKernel) => (await (await k.request('/api/channels/fake')).json()) as Detail;
  const inject = async (k: AgentTestKernel, platformId: string) =>
    (await (
      await k.request('/api/test-fake/inject', { method: 'POST', json: { platformId, chatId: 'c1', senderId: 'u1', isGroup: false, text: 'hi' } })
    ).json()) as {
      duplicate?: boolean;
      error?: string;
    };
  const node = (k: AgentTestKernel) => k.kernel.nodes.id;
  /** Waits until exactly one of the two runs the channel; answers [holder, standby]. */
  const oneRunning = () =>
    waitFor(
      async () => {
        const [da, db] = [await detail(a), await detail(b)];
        if (da.state === 'connected' && db.state === 'standby' && db.holder === node(a)) return [a, b] as const;
        if (db.state === 'connected' && da.state === 'standby' && da.holder === node(b)) return [b, a] as const;
        return undefined;
      },
      5000,
      'one process running the channel, the other on standby naming it',
    );

  test('configured on one process: it runs there, the other is on standby naming the holder', async () => {
    const res = await a.request('/api/channels/fake/configure', { method: 'POST', json: { token: 't', room: 'r1', dm_policy: 'open' } });
    assert.equal(res.status, 200);
    const body = (await res.json()) as Detail;
    assert.equal(body.state, 'connected');
    assert.equal(body.holder, node(a));
    await oneRunning();
    assert.equal((await detail(b)).started_at, null, 'the standby process never started the adapter, not even for a moment');
    assert.deepEqual(await inject(b, 'p-standby'), { error: 'not running' }, 'the standby process has no connection');
    assert.deepEqual(await inject(a, 'p-holder'), { duplicate: false });
    const listed = (await (await b.request('/api/channels')).json()) as { channels: Detail[] };
    assert.equal(listed.channels[0]!.state, 'standby');
    assert.equal(listed.channels[0]!.holder, node(a));
  });

  test('configure sent to the standby process: it stays on standby, the holder restarts with the new configuration', async () => {
    const [holder, standby] = await oneRunning();
    const before = (await detail(holder)).started_at;
    const res = await standby.request('/api/channels/fake/configure', { method: 'POST', json: { room: 'r2' } });
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as Detail).state, 'standby', 'no second connection');
    await waitFor(async () => (await detail(holder)).started_at !== before, 5000, 'the holder to restart');
    assert.equal((await detail(holder)).config?.room, 'r2');
    await oneRunning();
  });

  test('disable and enable sent to the standby process stop and start the holder', async () => {
    const [holder, standby] = await oneRunning();
    assert.equal((await standby.request('/api/channels/fake/disable', { method: 'PUT' })).status, 200);
    await waitFor(async () => (await detail(holder)).state === 'stopped', 5000, 'the holder to stop');
    assert.equal((await detail(standby)).state, 'stopped');
    assert.equal((await standby.request('/api/channels/fake/enable', { method: 'PUT' })).status, 200);
    await oneRunning();
  });

  test('an adapter whose lease another process took stops at once', async () => {
    const [holder, standby] = await oneRunning();
    await holder.kernel.store.run('UPDATE channels_leases SET node = ?, expires_at = ? WHERE channel = ?', [node(standby), Date.now() + 60_000, 'fake']);
    await waitFor(async () => (await detail(holder)).state === 'standby', 5000, 'the old holder to stop its adapter');
    assert.deepEqual(await inject(holder, 'p-lost'), { error: 'not running' });
    // The lease names a process that does not run the adapter: when it expires, one of the two starts it again.
    await holder.kernel.store.run('UPDATE channels_leases SET expires_at = 0 WHERE channel = ?', ['fake']);
    await oneRunning();
  });

  test('a send made on the standby process is handed to the holder, which sends it; the answer carries its id', async () => {
    const [holder, standby] = await oneRunning();
    const res = await standby.request('/api/channels/fake/test', { method: 'POST', json: { to: 'c-handed' } });
    assert.equal(res.status, 200, await res.clone().text());
    const body = (await res.json()) as { status: string; message_id: string };
    assert.equal(body.status, 'sent');
    // The fake platform takes 50 characters a message: the test text is two chunks, each sent once by the holder.
    const sent = ((await (await holder.request('/api/test-fake/sent')).json()) as { sent: Array<{ chatId: string; messageId: string; text: string }> }).sent;
    const chunks = sent.filter((s) => s.chatId === 'c-handed');
    assert.equal(chunks.length, 2);
    assert.equal(chunks.map((s) => s.text).join(' '), TEST_TEXT);
    assert.ok(chunks.some((s) => s.messageId === body.message_id));
  });

  test('the holder dies: the standby process takes over within two leases and messages flow there', async () => {
    const [holder, standby] = await oneRunning();
    const started = Date.now();
    // The holder stops beating, as a killed process would (its timers still run: it must notice the lease is gone).
    holder.kernel.nodes.silence();
    const leaseMs = standby.kernel.nodes.leaseMs;
    await waitFor(async () => (await detail(standby)).state === 'connected', 5000, 'the standby process to take over');
    // Found dead after a lease of silence (plus the beat that notices), then started: well within a few leases.
    assert.ok(Date.now() - started < 2 * leaseMs + 1500, `took ${Date.now() - started} ms`);
    assert.equal((await detail(standby)).holder, node(standby));
    await waitFor(async () => (await detail(holder)).state !== 'connected', 5000, 'the dead holder to stop its adapter');
    assert.deepEqual(await inject(standby, 'p-after'), { duplicate: false });
  });
});
