// The Signal adapter's own rules: an envelope delivered twice (same sender and timestamp) is one message; a reply to
// the bot counts as a mention in a group; messages sent while no stream is open come when it opens.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startAgentTestKernel, startSignalFake, waitFor, type AgentTestKernel, type SignalFake } from '@talon/testing';
import { mentioned } from '../services/inbound.ts';
import { configureFor, dmTexts, MODULES, person } from './helpers.ts';

describe('channel-signal through a kernel', () => {
  let k: AgentTestKernel;
  let s: SignalFake;
  before(async () => {
    s = await startSignalFake();
    k = await startAgentTestKernel({ only: MODULES });
    await k.spawnAgent('helper');
    const res = await k.request('/api/channels/signal/configure', { method: 'POST', json: { ...configureFor(s), dm_policy: 'open', group_policy: 'mention' } });
    assert.equal(res.status, 200, await res.text());
    await waitFor(async () => ((await (await k.request('/api/channels/signal')).json()) as { state: string }).state === 'connected', 15_000, 'connected');
  });
  after(async () => {
    await k?.stop();
    await s?.stop();
  });

  it('drops an envelope delivered again (dedup by source and timestamp)', async () => {
    k.fake.enqueue({ text: 'once' }, { text: 'twice?' });
    const ts = s.dm(person(1), 'hello');
    await waitFor(() => dmTexts(s, 1).length === 1, 15_000, 'answered');
    s.redeliver(ts);
    await sleep(500);
    assert.deepEqual(dmTexts(s, 1), ['once']);
  });

  it('counts a mention of its number or a quote of its message as a mention', () => {
    assert.equal(mentioned({ mentions: [{ number: s.number }] }, s.number), true);
    assert.equal(mentioned({ quote: { authorNumber: s.number } }, s.number), true);
    assert.equal(mentioned({ mentions: [{ number: person(2) }] }, s.number), false);
  });
});
