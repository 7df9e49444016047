// The shared channel conformance suite for the Matrix adapter, against the fake homeserver (client-server API).
import { channelConformance, startMatrixFake, type MatrixFake } from '@talon/testing';
import { configureFor, MODULES, person, roomsOf } from './helpers.ts';

channelConformance({
  name: 'channel-matrix',
  channel: 'matrix',
  only: MODULES,
  limits: { maxLength: 16_000, unit: 'bytes' },
  async harness() {
    const fake: MatrixFake = await startMatrixFake();
    const rooms = roomsOf(fake);
    const threads = new Map<number, string>();
    const texts = (roomId: string, thread?: string) =>
      fake.sent
        .filter((e) => e.room_id === roomId && e.content.msgtype === 'm.text')
        .filter((e) => !thread || (e.content['m.relates_to'] as { rel_type?: string; event_id?: string } | undefined)?.event_id === thread)
        .map((e) => String(e.content.body));
    return {
      configure: configureFor(fake),
      badCredentials: { token: 'syt_refused_by_the_homeserver' },
      dm: (n, text) => void fake.injectMessage(rooms.dm(n), person(n), text),
      group: (n, text, { mentioned, thread }) =>
        void fake.injectMessage(rooms.group(n), person(n), {
          msgtype: 'm.text',
          body: mentioned ? `Talon Bot: ${text}` : text,
          'm.mentions': mentioned ? { user_ids: [fake.userId] } : {},
          ...(thread ? { 'm.relates_to': { rel_type: 'm.thread', event_id: thread, is_falling_back: true, 'm.in_reply_to': { event_id: thread } } } : {}),
        }),
      // A thread starts at a root message (not addressed to the bot) that the replies relate to.
      thread: (n) =>
        threads.get(n) ??
        (threads.set(n, fake.injectMessage(rooms.group(n), person(n), { msgtype: 'm.text', body: 'a thread root', 'm.mentions': {} })), threads.get(n)!),
      received: (target) => ('dm' in target ? texts(rooms.dm(target.dm)) : texts(rooms.group(target.group), target.thread)),
      typings: (dm) => fake.typings.filter((t) => t.roomId === rooms.dm(dm) && t.typing).length,
      rateLimitOnce: (seconds) => fake.rateLimitNext('/send/', seconds * 1000),
      dropConnection: () => fake.dropConnections(),
      dmMedia: (n, file, text) => {
        const url = fake.addMedia(file.data, file.mediaType, file.name);
        const msgtype = file.mediaType.startsWith('image/') ? 'm.image' : 'm.file';
        const name = file.name ?? 'file';
        fake.injectMessage(rooms.dm(n), person(n), { msgtype, body: text, filename: name, url, info: { mimetype: file.mediaType, size: file.data.length } });
      },
      receivedMedia: ({ dm }) =>
        fake.sent
          .filter((e) => e.room_id === rooms.dm(dm) && typeof e.content.url === 'string')
          .map((e) => {
            const upload = fake.uploads.find((u) => u.uri === e.content.url)!;
            return { name: String(e.content.filename ?? e.content.body), mediaType: upload.type, data: upload.data };
          }),
      dmChat: (n) => rooms.dm(n),
      stop: () => fake.stop(),
    };
  },
});
