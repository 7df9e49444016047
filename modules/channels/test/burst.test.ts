import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AgentTestKernel } from '@talon/testing';
import { configure, inject, sent, startChannels, until } from './helpers.ts';

const kernels: AgentTestKernel[] = [];
after(() => Promise.all(kernels.map((k) => k.stop())));

async function ready(body: Record<string, unknown>): Promise<AgentTestKernel> {
  const k = await startChannels();
  kernels.push(k);
  await k.spawnAgent('helper');
  assert.equal((await configure(k, { token: 't', agent_name: 'helper', dm_policy: 'open', ...body })).status, 200);
  return k;
}

const userTexts = (k: AgentTestKernel) =>
  k.fake.requests.map((r) =>
    (r.body.messages as Array<{ role: string; content: unknown }>).filter((m) => m.role === 'user').map((m) => JSON.stringify(m.content)),
  );

test('with message_coalesce_window_ms, a burst from one sender is one turn; the joined rows end answered, each text once', async () => {
  const k = await ready({ message_coalesce_window_ms: 400 });
  k.fake.enqueue({ text: 'one answer' });
  for (const [i, text] of ['first line', 'second line', 'third line'].entries()) await inject(k, { platformId: `b${i}`, text });
  await until(async () => (await sent(k)).some((s) => s.text === 'one answer'), 'the reply');
  assert.equal(k.fake.requests.length, 1, 'one turn for the burst');
  assert.match(userTexts(k)[0].at(-1)!, /first line\\nsecond line\\nthird line/);
  const rows = await k.kernel.store.many<{ platform_id: string; state: string; reason: string | null }>(
    "SELECT platform_id, state, reason FROM channels_inbound WHERE platform_id LIKE 'b%' ORDER BY platform_id",
  );
  assert.deepEqual(
    rows.map((r) => [r.platform_id, r.state]),
    [
      ['b0', 'answered'],
      ['b1', 'answered'],
      ['b2', 'answered'],
    ],
  );
  assert.match(rows[1].reason ?? '', /joined into/);
});

test('a burst joins only its own sender; another sender in the same chat gets a turn of its own', async () => {
  const k = await ready({ message_coalesce_window_ms: 300 });
  k.fake.enqueue({ text: 'to ann' });
  k.fake.enqueue({ text: 'to bob' });
  await inject(k, { platformId: 's1', text: 'ann speaks', chatId: 'room', senderId: 'ann' });
  await inject(k, { platformId: 's2', text: 'bob speaks', chatId: 'room', senderId: 'bob' });
  await until(async () => ((await sent(k)).length >= 2 ? true : undefined), 'two replies');
  assert.equal(k.fake.requests.length, 2);
});

test('without a window (the default) two messages sent back to back are two turns', async () => {
  const k = await ready({});
  k.fake.enqueue({ text: 'r1' });
  k.fake.enqueue({ text: 'r2' });
  await inject(k, { platformId: 'n1', text: 'one' });
  await inject(k, { platformId: 'n2', text: 'two' });
  await until(async () => ((await sent(k)).length >= 2 ? true : undefined), 'two replies');
  assert.equal(k.fake.requests.length, 2);
});

test('a bad window is a 400 naming the field', async () => {
  const k = await ready({});
  const res = await configure(k, { message_coalesce_window_ms: -5 });
  assert.equal(res.status, 400);
  assert.match(((await res.json()) as { error: string }).error, /message_coalesce_window_ms/);
});
