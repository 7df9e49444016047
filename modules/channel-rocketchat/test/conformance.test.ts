// The shared channel conformance suite for the Rocket.Chat adapter, against the fake server (REST + realtime DDP).
import { channelConformance, startRocketChatFake, type RocketChatFake } from '@talon/testing';

const MODULES = ['agents', 'auth', 'error-envelope', 'secrets', 'net', 'tasks', 'commands', 'bindings', 'channels', 'channel-rocketchat'];
const person = (n: number) => `person${n}`;

channelConformance({
  name: 'channel-rocketchat',
  channel: 'rocketchat',
  only: MODULES,
  limits: { maxLength: 5_000, unit: 'chars' },
  async harness() {
    const fake: RocketChatFake = await startRocketChatFake();
    const dms = new Map<number, string>();
    const groups = new Map<number, string>();
    const threads = new Map<number, string>();
    const dm = (n: number) => dms.get(n) ?? (dms.set(n, fake.createRoom('d', [person(n)])), dms.get(n)!);
    const group = (n: number) => groups.get(n) ?? (groups.set(n, fake.createRoom('c', [person(n), person(n + 1000)])), groups.get(n)!);
    const texts = (rid: string, thread?: string) => fake.sent.filter((m) => m.rid === rid && (!thread || m.tmid === thread)).map((m) => m.msg);
    return {
      configure: { token: fake.token, server_url: fake.url, user_id: fake.userId },
      badCredentials: { token: 'rc-token-refused-by-the-server' },
      dm: (n, text) => void fake.injectMessage(dm(n), person(n), text),
      group: (n, text, { mentioned, thread }) =>
        void fake.injectMessage(group(n), person(n), mentioned ? `@${fake.username} ${text}` : text, thread ? { tmid: thread } : {}),
      thread: (n) => threads.get(n) ?? (threads.set(n, fake.injectMessage(group(n), person(n), 'a thread root')), threads.get(n)!),
      received: (target) => ('dm' in target ? texts(dm(target.dm)) : texts(group(target.group), target.thread)),
      typings: (n) => fake.activities.filter((a) => a.rid === dm(n) && a.activity.includes('user-typing')).length,
      rateLimitOnce: (seconds) => fake.rateLimitNext('/chat.sendMessage', seconds),
      dropConnection: () => fake.dropConnections(),
      dmChat: (n) => dm(n),
      stop: () => fake.stop(),
    };
  },
});
