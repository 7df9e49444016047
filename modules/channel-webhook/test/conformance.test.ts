// The shared channel conformance suite for the webhook adapter, with a tiny local HTTP receiver as the platform.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { channelConformance } from '@talon/testing';
import { MODULES, postInbound, SECRET } from './helpers.ts';
import { startReceiver } from './receiver.ts';

channelConformance({
  name: 'channel-webhook',
  channel: 'webhook',
  only: MODULES,
  limits: { maxLength: 4000, unit: 'chars' },
  async harness(kernel) {
    const receiver = await startReceiver(SECRET);
    const send = async (body: object) => {
      const res = await postInbound(kernel(), { id: randomUUID(), sender_id: 'u1', ...body });
      assert.equal(res.status, 200, `inbound answered ${res.status}: ${await res.text()}`);
    };
    return {
      configure: { token: SECRET, callback_url: receiver.url },
      badCredentials: { token: 'not-the-receivers-secret' },
      dm: (n, text) => send({ chat_id: `dm-${n}`, text }),
      group: (n, text, { mentioned, thread }) => send({ chat_id: `group-${n}`, text, is_group: true, mentioned, ...(thread ? { thread_id: thread } : {}) }),
      received: (target) =>
        receiver.replies
          .filter((r) =>
            'dm' in target ? r.chat_id === `dm-${target.dm}` : r.chat_id === `group-${target.group}` && (!target.thread || r.thread_id === target.thread),
          )
          .map((r) => r.text),
      rateLimitOnce: (seconds) => receiver.rateLimitOnce(seconds),
      dmMedia: (n, file, text) =>
        send({ chat_id: `dm-${n}`, text, media: [{ name: file.name ?? 'file', media_type: file.mediaType, data: file.data.toString('base64') }] }),
      receivedMedia: ({ dm }) =>
        receiver.replies
          .filter((r) => r.chat_id === `dm-${dm}` && r.media?.data !== undefined)
          .map((r) => ({ name: r.media!.name, mediaType: r.media!.media_type, data: Buffer.from(r.media!.data!, 'base64') })),
      dmChat: (n) => `dm-${n}`,
      thread: (n) => `thread-${n}`,
      stop: () => receiver.stop(),
    };
  },
});
