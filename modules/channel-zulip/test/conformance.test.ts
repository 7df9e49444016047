// The shared channel conformance suite for the Zulip adapter, against the fake Zulip server (REST + event queue).
import { channelConformance, startZulipFake, type ZulipFake } from '@talon/testing';
import { configureFor, dmChat, dmTexts, MODULES, person, streamName } from './helpers.ts';

channelConformance({
  name: 'channel-zulip',
  channel: 'zulip',
  only: MODULES,
  limits: { maxLength: 10_000, unit: 'chars' },
  async harness() {
    const fake: ZulipFake = await startZulipFake();
    // Zulip has no message without a topic: a group message outside a thread is in the stream's "general" topic.
    const streamTexts = (n: number, topic?: string) =>
      fake.sent.filter((m) => m.type === 'stream' && m.display_recipient === streamName(n) && (!topic || m.subject === topic)).map((m) => m.content);
    return {
      configure: configureFor(fake),
      badCredentials: { token: 'refused-by-the-zulip-server-0000' },
      dm: (n, text) => void fake.dm(person(n), text),
      group: (n, text, { mentioned, thread }) => void fake.streamMessage(streamName(n), thread ?? 'general', person(n), text, { mentioned }),
      thread: (n) => `topic ${n}`,
      received: (target) => ('dm' in target ? dmTexts(fake, target.dm) : streamTexts(target.group, target.thread)),
      typings: (n) => fake.typings.filter((t) => t.op === 'start' && t.to?.includes(fake.user(person(n)))).length,
      rateLimitOnce: (seconds) => fake.rateLimitNext('/messages', seconds),
      dropConnection: () => fake.dropConnections(),
      dmMedia: (n, file, text) => {
        const path = fake.addUpload(file.data, file.mediaType, file.name ?? 'file');
        fake.dm(person(n), `${text}\n[${file.name ?? 'file'}](${path})`);
      },
      receivedMedia: ({ dm }) => {
        const texts = dmTexts(fake, dm).join('\n');
        return fake.uploads.filter((u) => texts.includes(u.path)).map((u) => ({ name: u.name, mediaType: u.type, data: u.data }));
      },
      dmChat: (n) => dmChat(fake, n),
      stop: () => fake.stop(),
    };
  },
});
