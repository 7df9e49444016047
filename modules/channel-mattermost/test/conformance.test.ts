// The shared channel conformance suite for the Mattermost adapter, against the fake server (REST v4 + WebSocket).
import { channelConformance, startMattermostFake, type MattermostFake } from '@talon/testing';
import { channelsOf, configureFor, MODULES, person } from './helpers.ts';

channelConformance({
  name: 'channel-mattermost',
  channel: 'mattermost',
  only: MODULES,
  limits: { maxLength: 16_383, unit: 'chars' },
  async harness() {
    const fake: MattermostFake = await startMattermostFake();
    const chats = channelsOf(fake);
    const threads = new Map<number, string>();
    const texts = (channelId: string, thread?: string) =>
      fake.sent.filter((p) => p.channel_id === channelId && p.message && (!thread || p.root_id === thread)).map((p) => p.message);
    return {
      configure: configureFor(fake),
      badCredentials: { token: 'mm-token-refused-by-the-server' },
      dm: (n, text) => void fake.injectPost(chats.dm(n), person(n), text),
      group: (n, text, { mentioned, thread }) =>
        void fake.injectPost(chats.group(n), person(n), mentioned ? `@${fake.bot.username} ${text}` : text, thread ? { rootId: thread } : {}),
      // A thread starts at a root post (not addressed to the bot) that the replies answer.
      thread: (n) => threads.get(n) ?? (threads.set(n, fake.injectPost(chats.group(n), person(n), 'a thread root')), threads.get(n)!),
      received: (target) => ('dm' in target ? texts(chats.dm(target.dm)) : texts(chats.group(target.group), target.thread)),
      typings: (dm) => fake.typings.filter((t) => t.channel_id === chats.dm(dm)).length,
      rateLimitOnce: (seconds) => fake.rateLimitNext('/posts', seconds),
      dropConnection: () => fake.dropConnections(),
      dmMedia: (n, file, text) => {
        const fileId = fake.addFile(file.data, file.mediaType, file.name ?? 'file');
        fake.injectPost(chats.dm(n), person(n), text, { fileIds: [fileId] });
      },
      receivedMedia: ({ dm }) =>
        fake.sent
          .filter((p) => p.channel_id === chats.dm(dm) && p.file_ids.length)
          .flatMap((p) => p.file_ids.map((id) => fake.uploads.find((u) => u.id === id)!))
          .map((u) => ({ name: u.name, mediaType: u.type, data: u.data })),
      dmChat: (n) => chats.dm(n),
      stop: () => fake.stop(),
    };
  },
});
