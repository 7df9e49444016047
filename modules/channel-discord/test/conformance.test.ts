// The shared channel conformance suite for the Discord adapter, against the Discord fake (REST v10 + Gateway).
import { channelConformance, startDiscordFake, type DiscordFake } from '@talon/testing';

const ALICE = { id: '900000000000000001', username: 'alice', discriminator: '0', global_name: 'Alice' };
const GUILD = '300';
// Channel ids apart per kind: a DM channel, a guild channel, and a thread (a channel of its own on Discord).
const dmId = (n: number) => String(700_000 + n);
const groupId = (n: number) => String(800_000 + n);

channelConformance({
  name: 'channel-discord',
  channel: 'discord',
  only: ['agents', 'auth', 'error-envelope', 'secrets', 'net', 'tasks', 'channels', 'channel-discord'],
  limits: { maxLength: 2000, unit: 'chars' },
  async harness() {
    const dc: DiscordFake = await startDiscordFake({ heartbeatInterval: 500 });
    const textsIn = (channelId: string) => dc.sent.filter((m) => m.channel_id === channelId).map((m) => String(m.content));
    return {
      configure: { token: dc.token, api_url: dc.api },
      // Discord refuses a bad token on REST (401 on GET /users/@me) before the Gateway would close with 4004;
      // discord.test.ts covers the 4004 close itself.
      badCredentials: { token: 'refused-discord-token' },
      dm: (n, text) => void dc.injectMessage({ channel_id: dmId(n), content: text, author: ALICE }),
      group: (n, text, { mentioned, thread }) =>
        void dc.injectMessage({
          channel_id: thread ?? groupId(n),
          guild_id: GUILD,
          content: mentioned ? `<@${dc.bot.id}> ${text}` : text,
          mentions: mentioned ? [dc.bot] : [],
          author: ALICE,
        }),
      // The user's file as an attachment the fake serves at its CDN-style URL (the adapter downloads it).
      dmMedia: (n, file, text) =>
        void dc.injectMessage({
          channel_id: dmId(n),
          content: text,
          author: ALICE,
          files: [{ name: file.name ?? 'file', type: file.mediaType, content: file.data }],
        }),
      // Read back the way a client would: the attachment URLs of the messages the bot created.
      receivedMedia: async ({ dm }) => {
        const files = [];
        for (const m of dc.sent.filter((s) => s.channel_id === dmId(dm))) {
          for (const a of m.attachments as Array<{ filename: string; content_type: string; url: string }>) {
            files.push({ name: a.filename, mediaType: a.content_type, data: Buffer.from(await (await fetch(a.url)).arrayBuffer()) });
          }
        }
        return files;
      },
      dmChat: dmId,
      received: (target) => textsIn('dm' in target ? dmId(target.dm) : (target.thread ?? groupId(target.group))),
      typings: (n) => dc.calls.filter((c) => c.method === `POST /channels/${dmId(n)}/typing`).length,
      rateLimitOnce: (seconds) => dc.rateLimitNext('POST /channels/*/messages', seconds),
      // A network drop (the fake terminates the socket): the library resumes and the fake replays what it missed.
      dropConnection: () => dc.dropConnections(),
      thread: (n) => String(850_000 + n),
      stop: () => dc.stop(),
    };
  },
});
