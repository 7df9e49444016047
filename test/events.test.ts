import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CustomEvent, TalonEvent } from '@talon/module-sdk';
import { EventBus } from '../kernel/events.ts';
import { startTestKernel, waitFor } from '@talon/testing';
import { manifest, tempModules } from './support/temp-modules.ts';

const quietBus = () => {
  const warnings: Array<{ data: Record<string, unknown>; message: string }> = [];
  return { bus: new EventBus((data, message) => void warnings.push({ data, message })), warnings };
};

test('events reach the subscribers of their type and of *, in order, after the publisher has gone on', async () => {
  const { bus } = quietBus();
  const a = bus.scope('a');
  const seen: string[] = [];
  a.subscribe(['task.posted'], (e) => void seen.push(`task:${(e.data as { taskId: string }).taskId}`));
  a.subscribe('*', (e: TalonEvent) => void seen.push(`any:${e.type}`));
  a.commit();
  const published = bus.publish('tasks', 'task.posted', { taskId: 't1', title: 'one' });
  bus.publish('agents', 'agent.spawned', { agentId: 'x', name: 'n' });
  assert.deepEqual(seen, [], 'delivery never runs inside publish');
  await waitFor(() => seen.length === 3, 2_000, 'delivery');
  assert.deepEqual(seen, ['task:t1', 'any:task.posted', 'any:agent.spawned']);
  assert.equal(published.source, 'tasks');
  assert.match(published.id, /^[0-9a-f-]{36}$/);
});

test('a throwing subscriber is logged and counted; the others and the next events still arrive', async () => {
  const { bus, warnings } = quietBus();
  const s = bus.scope('m');
  const got: string[] = [];
  const n = (e: TalonEvent) => (e.data as CustomEvent).data as number;
  s.subscribe(['custom'], (e) => {
    if (n(e) === 1) throw new Error('bad handler');
    got.push(`first:${n(e)}`);
  });
  s.subscribe(['custom'], (e) => void got.push(`second:${n(e)}`));
  s.commit();
  for (const n of [1, 2]) bus.publish('x', 'custom', { type: 'n', data: n });
  await waitFor(() => got.length === 3, 2_000, 'delivery');
  assert.deepEqual(got.sort(), ['first:2', 'second:1', 'second:2']);
  assert.equal(bus.stats().find((x) => x.failed)?.failed, 1);
  assert.ok(warnings.some((w) => w.message.includes('failed')));
});

test('a hanging subscriber holds up only its own bounded queue: overflow is counted and logged, never silent', async () => {
  const { bus, warnings } = quietBus();
  const s = bus.scope('m');
  let release!: () => void;
  const stuck = new Promise<void>((r) => (release = r));
  let fast = 0;
  s.subscribe(['custom'], () => stuck, { queue: 5 });
  s.subscribe(['custom'], () => void fast++);
  s.commit();
  for (let i = 0; i < 20; i++) bus.publish('x', 'custom', { type: 'n', data: i });
  await waitFor(() => fast === 20, 2_000, 'the fast subscriber');
  const slow = bus.stats().find((x) => x.queued > 0 || x.dropped > 0)!;
  assert.equal(slow.dropped, 15, 'all 20 were published before delivery began: 5 queued, the rest dropped');
  assert.ok(warnings.some((w) => /not keeping up/.test(w.message) && w.data.subscriber === 'm'));
  release();
  await waitFor(() => bus.stats().every((x) => x.queued === 0), 2_000, 'the slow subscriber to catch up');
});

test('subscriptions are staged until the module copy commits and end when it stops', async () => {
  const { bus } = quietBus();
  const s = bus.scope('m');
  let n = 0;
  s.subscribe(['custom'], () => void n++);
  bus.publish('x', 'custom', { type: 'a', data: 1 });
  s.commit();
  bus.publish('x', 'custom', { type: 'a', data: 2 });
  await waitFor(() => n === 1, 2_000, 'delivery after commit');
  s.close();
  bus.publish('x', 'custom', { type: 'a', data: 3 });
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(n, 1);
});

test("modules reach the bus through ctx.events; a reloaded copy's subscriptions replace the old ones", async () => {
  const mods = tempModules({
    listener: {
      'module.toml': manifest({ name: 'listener' }),
      'index.ts': `import { defineModule } from '@talon/module-sdk';
export default defineModule({
  register(ctx) {
    const seen: string[] = [];
    ctx.events.subscribe('custom', (e) => void seen.push(String(e.data.data)));
    return { routes(app) {
      app.post('/api/emit', async () => ({ id: ctx.events.publish('custom', { type: 'ping', data: 'p' }).id }));
      app.get('/api/seen', async () => ({ seen }));
    } };
  },
});
`,
    },
  });
  const k = await startTestKernel({ only: ['listener'], config: `module_paths = ["${mods.root}"]\n` });
  try {
    await k.request('/api/emit', { method: 'POST' });
    await waitFor(async () => ((await (await k.request('/api/seen')).json()) as { seen: string[] }).seen.length === 1, 2_000, 'the event');
    assert.ok((await k.kernel.reloadModule('listener')).ok);
    await k.kernel.settled();
    await k.request('/api/emit', { method: 'POST' });
    await waitFor(async () => ((await (await k.request('/api/seen')).json()) as { seen: string[] }).seen.length === 1, 2_000, 'the new copy to see it');
    assert.equal(k.kernel.events.stats().filter((s) => s.owner === 'listener').length, 1, 'only the new copy subscribes');
  } finally {
    await k.stop();
    mods.remove();
  }
});
