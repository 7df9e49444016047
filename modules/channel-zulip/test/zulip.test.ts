// The Zulip adapter's own rules: an expired event queue is registered again and the gap caught up from the last
// message (nothing lost, nothing twice), and only the configured streams are read.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startAgentTestKernel, startZulipFake, waitFor, type AgentTestKernel, type ZulipFake } from '@talon/testing';
import { configureFor, dmTexts, MODULES, person, streamName } from './helpers.ts';

describe('channel-zulip through a kernel', () => {
  let k: AgentTestKernel;
  let z: ZulipFake;
  const configure = async (body: Record<string, unknown>) => {
    const res = await k.request('/api/channels/zulip/configure', { method: 'POST', json: body });
    assert.equal(res.status, 200, await res.text());
    await waitFor(async () => ((await (await k.request('/api/channels/zulip')).json()) as { state: string }).state === 'connected', 15_000, 'connected');
  };
  before(async () => {
    z = await startZulipFake();
    k = await startAgentTestKernel({ only: MODULES });
    await k.spawnAgent('helper');
    await configure({ ...configureFor(z), dm_policy: 'open', group_policy: 'mention' });
  });
  after(async () => {
    await k?.stop();
    await z?.stop();
  });

  it('registers a new queue when the old one expired and reads the messages in between with GET /messages', async () => {
    k.fake.enqueue({ text: 'before' });
    z.dm(person(1), 'first');
    await waitFor(() => dmTexts(z, 1).length === 1, 15_000, 'first answered');
    const queues = z.registered.length;
    // The server collects the queue: what is sent now reaches no queue, only the message history.
    z.expireQueues();
    k.fake.enqueue({ text: 'gap one' }, { text: 'gap two' });
    z.dm(person(1), 'in the gap 1');
    z.dm(person(1), 'in the gap 2');
    await waitFor(() => dmTexts(z, 1).length === 3, 20_000, 'the gap answered');
    assert.equal(z.registered.length, queues + 1, 'one new queue');
    assert.ok(
      z.calls.some((c) => c.path === '/api/v1/messages' && c.method === 'GET' && c.params.include_anchor === 'false'),
      'caught up after the anchor',
    );
    await sleep(300);
    assert.deepEqual(dmTexts(z, 1), ['before', 'gap one', 'gap two'], 'nothing twice');
  });

  it('reads only the configured streams (direct messages always)', async () => {
    await configure({ streams: [streamName(2)] });
    z.stream(streamName(2));
    z.stream(streamName(3));
    const asked = k.fake.requests.length;
    z.streamMessage(streamName(3), 'news', person(3), 'not a stream it reads', { mentioned: true });
    k.fake.enqueue({ text: 'read it' });
    z.streamMessage(streamName(2), 'news', person(2), 'a stream it reads', { mentioned: true });
    await waitFor(() => z.sent.some((m) => m.display_recipient === streamName(2) && m.subject === 'news'), 15_000, 'the listed stream answered');
    await sleep(300);
    assert.equal(k.fake.requests.length, asked + 1, 'one turn: none for the stream not listed');
    assert.ok(!z.sent.some((m) => m.display_recipient === streamName(3)));
  });
});
