/** DELETE /api/channels/{name}/pairing/{code}: the owner turns a pairing code down; its sender stays unknown. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AgentTestKernel } from '@talon/testing';
import { configure, inject, sent, startChannels, until } from './helpers.ts';

let k: AgentTestKernel;
before(async () => {
  k = await startChannels();
  await k.spawnAgent('helper');
});
after(() => k?.stop());

const codes = async () => ((await (await k.request('/api/channels/fake/pairing')).json()) as { requests: Array<{ code: string; sender_id: string }> }).requests;

test('a rejected code is gone, its sender is not admitted, and a later message asks for a new code', async () => {
  assert.equal((await configure(k, { dm_policy: 'pairing' })).status, 200);
  await inject(k, { platformId: 'r1', senderId: 'stranger', chatId: 'dm-r', text: 'let me in' });
  const [request] = await until(async () => {
    const open = await codes();
    return open.length ? open : undefined;
  }, 'a pairing code');
  let res = await k.request(`/api/channels/fake/pairing/${request.code.toLowerCase()}`, { method: 'DELETE' });
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { status: 'rejected', channel: 'fake', code: request.code });
  assert.deepEqual(await codes(), []);
  res = await k.request(`/api/channels/fake/pairing/${request.code}/approve`, { method: 'POST' });
  assert.equal(res.status, 404, 'a rejected code cannot be approved afterwards');
  res = await k.request(`/api/channels/fake/pairing/${request.code}`, { method: 'DELETE' });
  assert.equal(res.status, 404);
  assert.match(((await res.json()) as { error: string }).error, new RegExp(request.code));

  await inject(k, { platformId: 'r2', senderId: 'stranger', chatId: 'dm-r', text: 'again' });
  const [next] = await until(async () => {
    const open = await codes();
    return open.length ? open : undefined;
  }, 'a new pairing code');
  assert.notEqual(next.code, request.code);
  // The code is stored before the message telling it goes out.
  const told = async () =>
    (await sent(k))
      .filter((s) => s.chatId === 'dm-r')
      .map((s) => s.text)
      .join('')
      .includes(next.code);
  await until(told, 'the sender is told the new code');
  const refused = await k.kernel.store.many<{ reason: string }>("SELECT reason FROM channels_inbound WHERE platform_id IN ('r1', 'r2')");
  assert.deepEqual(
    refused.map((r) => r.reason),
    ['pairing', 'pairing'],
    'the rejected sender never reached the agent',
  );
});
