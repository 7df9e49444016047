import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AgentTestKernel } from '@talon/testing';
import type { Channels, ChannelLimits } from '@talon/channels';
import { MAX_OUTBOUND_MEDIA_BYTES, mediaProblem, placeMedia, userMessage } from '../services/media.ts';
import { chunksFor } from '../services/render.ts';
import { configure, inject, sent, startChannels, until } from './helpers.ts';

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex').toString('base64');
const LIMITS: ChannelLimits = { maxLength: 50, unit: 'utf16', format: 'plain' };

describe('inbound files as the user message', () => {
  test('an image with its content is an image block after the text; other files are notes naming them', () => {
    const m = userMessage({
      platformId: 'p',
      chatId: 'c',
      senderId: 's',
      isGroup: false,
      text: 'look',
      media: [
        { mediaType: 'image/PNG', name: 'a.png', data: PNG },
        { mediaType: 'application/pdf', name: 'b.pdf', data: 'AAAA' },
        { mediaType: 'image/jpeg', name: 'c.jpg', url: 'https://example.com/c.jpg' },
      ],
    });
    assert.equal(m.text, 'look\n[attachment: b.pdf (application/pdf)]\n[attachment: c.jpg (image/jpeg) https://example.com/c.jpg]');
    assert.deepEqual(m.blocks, [
      { type: 'text', text: m.text },
      { type: 'image', mediaType: 'image/png', data: PNG },
    ]);
  });

  test('a message without images has no blocks; an image alone has no empty text block', () => {
    assert.deepEqual(userMessage({ platformId: 'p', chatId: 'c', senderId: 's', isGroup: false, text: 'hi' }), { text: 'hi' });
    const alone = userMessage({ platformId: 'p', chatId: 'c', senderId: 's', isGroup: false, text: '', media: [{ mediaType: 'image/gif', data: PNG }] });
    assert.deepEqual(alone.blocks, [{ type: 'image', mediaType: 'image/gif', data: PNG }]);
  });
});

describe('outbound files', () => {
  test('content needs a channel that takes uploads; a URL goes anywhere; each field is checked by name', () => {
    const file = { mediaType: 'image/png', name: 'a.png', data: PNG };
    assert.equal(mediaProblem([file], true), undefined);
    assert.match(mediaProblem([file], false)!, /^media\[0\]: this channel takes no uploads/);
    assert.equal(mediaProblem([{ mediaType: 'image/png', name: 'a.png', url: 'https://example.com/a.png' }], false), undefined);
    assert.match(mediaProblem([file, { mediaType: 'image/png', name: 'b', url: 'javascript:alert(1)' }], true)!, /^media\[1\]\.url/);
    assert.match(mediaProblem([{ mediaType: 'image/png', name: 'a', data: PNG, url: 'https://x.example/a' }], true)!, /exactly one of data/);
    assert.match(mediaProblem([{ mediaType: 'image/png', name: 'a' }], true)!, /exactly one of data/);
    assert.match(mediaProblem([{ mediaType: '', name: 'a', data: PNG }], true)!, /^media\[0\]\.mediaType/);
    assert.match(mediaProblem([{ mediaType: 'image/png', name: ' ', data: PNG }], true)!, /^media\[0\]\.name/);
    assert.match(mediaProblem([{ mediaType: 'image/png', name: 'a', data: 'not base64!' }], true)!, /^media\[0\]\.data: expected base64/);
    const big = Buffer.alloc(MAX_OUTBOUND_MEDIA_BYTES + 3).toString('base64');
    assert.match(mediaProblem([{ mediaType: 'application/octet-stream', name: 'big', data: big }], true)!, /^media\[0\]\.data: over/);
  });

  test('links join the text; uploads follow the text as chunks of their own, with no text', () => {
    const upload = { mediaType: 'image/png', name: 'a.png', data: PNG };
    const placed = placeMedia('see', [upload, { mediaType: 'text/html', name: 'page', url: 'https://example.com/p' }]);
    assert.deepEqual(placed, { text: 'see\npage: https://example.com/p', uploads: [upload] });
    const chunks = chunksFor('x '.repeat(40), LIMITS, { chatId: 'c' }, placed.uploads);
    assert.ok(chunks.length >= 3);
    assert.ok(chunks.slice(0, -1).every((c) => c.media === undefined && c.text.trim()));
    assert.deepEqual({ ...chunks.at(-1)!, nonce: '' }, { chatId: 'c', text: '', plain: '', media: upload, nonce: '' });
    assert.deepEqual(
      chunksFor('', LIMITS, { chatId: 'c' }, [upload]).map((c) => c.media),
      [upload],
      'a file alone',
    );
  });
});

describe('files through a running channel', () => {
  let k: AgentTestKernel;
  before(async () => {
    k = await startChannels();
    await k.spawnAgent('helper');
    assert.equal((await configure(k, { token: 't', agent_name: 'helper', dm_policy: 'open' })).status, 200);
  });
  after(() => k?.stop());

  test("an inbound image reaches the model as an image part of the user message, in the session's history too", async () => {
    k.fake.enqueue({ text: 'a pixel' }, { text: 'still a pixel' });
    await inject(k, { platformId: 'img1', chatId: 'media', text: 'what is this?', media: [{ mediaType: 'image/png', name: 'p.png', data: PNG }] });
    await until(async () => ((await sent(k)).some((s) => s.replyTo === 'img1') ? true : undefined), 'the reply');
    const parts = JSON.stringify(k.fake.requests.at(-1)!.body.messages);
    assert.ok(parts.includes(`data:image/png;base64,${PNG}`), parts);
    assert.match(parts, /what is this\?/);
    await inject(k, { platformId: 'img2', chatId: 'media', text: 'and now?' });
    await until(async () => ((await sent(k)).some((s) => s.replyTo === 'img2') ? true : undefined), 'the second reply');
    assert.ok(JSON.stringify(k.fake.requests.at(-1)!.body.messages).includes(PNG), 'the image stays in the history');
  });

  test('Channels.send: a file by URL goes as a link on a channel without uploads; content there is a 400 naming the field', async () => {
    const channels = k.kernel.services.view<Channels>('channels.service');
    await channels.send({
      channel: 'fake',
      chatId: 'out',
      text: 'the chart',
      media: [{ mediaType: 'image/png', name: 'chart', url: 'https://example.com/c.png' }],
    });
    const texts = (await sent(k)).filter((s) => s.chatId === 'out').map((s) => s.text);
    assert.deepEqual(texts, ['the chart\nchart: https://example.com/c.png']);
    await assert.rejects(
      channels.send({ channel: 'fake', chatId: 'out', text: 'x', media: [{ mediaType: 'image/png', name: 'chart', data: PNG }] }),
      (err: Error & { statusCode?: number }) => err.statusCode === 400 && /media\[0\]: this channel takes no uploads/.test(err.message),
    );
    assert.equal((await sent(k)).filter((s) => s.chatId === 'out').length, 1, 'nothing sent for the refused file');
  });
});
