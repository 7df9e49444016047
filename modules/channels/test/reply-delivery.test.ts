import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AgentTestKernel } from '@talon/testing';
import { configure, inject, sent, startChannels, until } from './helpers.ts';

let k: AgentTestKernel | undefined;
after(() => k?.stop());

test("a conversation's next message is taken while the previous reply still waits on the platform; replies keep their order", async () => {
  k = await startChannels({ script: [{ text: 'first reply' }, { text: 'second reply' }] });
  await k.spawnAgent('helper');
  assert.equal((await configure(k, { token: 't', agent_name: 'helper', dm_policy: 'open' })).status, 200);
  await k.request('/api/test-fake/send-delay', { method: 'POST', json: { ms: 1500 } });
  await inject(k, { platformId: 'd1', text: 'one' });
  await inject(k, { platformId: 'd2', text: 'two' });
  // The second turn reaches the model before the first reply is on the platform.
  await until(async () => (k!.fake.requests.length >= 2 ? true : undefined), 'the second turn');
  assert.equal((await sent(k)).length, 0, 'the first reply is still being sent');
  const replies = await until(async () => ((await sent(k!)).length >= 2 ? sent(k!) : undefined), 'both replies');
  assert.deepEqual(
    replies.map((r) => r.text),
    ['first reply', 'second reply'],
  );
});
