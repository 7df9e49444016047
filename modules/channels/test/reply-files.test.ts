/** The files a turn's tools made (TurnResult.files) go out with the reply: uploads where the channel takes them, links otherwise. */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startAgentTestKernel, type AgentTestKernel } from '@talon/testing';
import { configure, fixtures, inject, sent, until } from './helpers.ts';

const AGENT_FIXTURES = path.resolve(import.meta.dirname, '../../agents/test/fixtures');
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

describe('files a reply carries, through a running channel', () => {
  let k: AgentTestKernel;
  before(async () => {
    k = await startAgentTestKernel({
      only: ['agents', 'auth', 'error-envelope', 'secrets', 'net', 'tasks', 'channels', 'channel-fake', 'file-tools'],
      config: `module_paths = [${JSON.stringify(fixtures)}, ${JSON.stringify(AGENT_FIXTURES)}]\n`,
    });
    await k.spawnAgent('painter', { capabilities: { tools: ['make_image'] } });
    assert.equal((await configure(k, { token: 't', agent_name: 'painter', dm_policy: 'open' })).status, 200);
  });
  after(() => k?.stop());

  /** The reply's chunks, once its file went out (an upload, or the link in the text). */
  const replyTo = (platformId: string) =>
    until(async () => {
      const chunks = (await sent(k)).filter((s) => s.replyTo === platformId);
      return chunks.some((c) => c.media || c.text.includes('/api/uploads/')) && chunks;
    }, 'the reply with its file');
  const setMedia = (media: boolean) => k.request('/api/test-fake/media', { method: 'POST', json: { media } });

  test('on a channel that takes uploads, each file is an upload of its own after the text, its bytes from the store', async () => {
    await setMedia(true);
    k.fake.enqueue({ toolCalls: [{ name: 'make_image', input: { name: 'sunset' } }] }, { text: 'Done.' });
    await inject(k, { platformId: 'u1', chatId: 'files', text: 'paint a sunset' });
    const chunks = await replyTo('u1');
    assert.deepEqual(
      chunks.map((c) => [c.text, c.media]),
      [
        ['Done.', undefined],
        ['', { name: 'sunset.png', mediaType: 'image/png', data: PNG }],
      ],
    );
  });

  test('on a channel without uploads, each file is a link line in the text', async () => {
    await setMedia(false);
    k.fake.enqueue({ toolCalls: [{ name: 'make_image', input: { name: 'moon' } }] }, { text: 'Done.' });
    await inject(k, { platformId: 'l1', chatId: 'links', text: 'paint the moon' });
    const chunks = await replyTo('l1');
    assert.ok(chunks.every((c) => !c.media));
    const text = chunks.map((c) => c.text).join('\n');
    assert.match(text, /^Done\.\nmoon\.png:\n?\/api\/uploads\/[0-9a-f-]{36}$/);
  });
});
