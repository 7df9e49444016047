/**
 * The shared channel conformance suite for the ntfy adapter, against the ntfy fake (test/fakes/ntfy, the real JSON
 * stream and publish API). DM `n` is the topic `dm<n>`: the bot subscribes to all of them, a person publishes to one,
 * and the bot's replies are the topic's messages carrying its reply tag. ntfy topics have no groups or threads.
 */
import { channelConformance, startNtfyFake } from '@talon/testing';
import { NTFY_MAX_BYTES } from '../services/adapter.ts';
import { REPLY_TAG } from '../services/messages.ts';

/** One topic per case that may stage a DM (cases number from 1 and are fewer than this). */
const TOPICS = 14;
const topic = (n: number) => `dm${n}`;

channelConformance({
  name: 'channel-ntfy',
  channel: 'ntfy',
  only: ['agents', 'auth', 'error-envelope', 'secrets', 'net', 'tasks', 'commands', 'bindings', 'channels', 'channel-ntfy'],
  limits: { maxLength: NTFY_MAX_BYTES, unit: 'bytes' },
  async harness() {
    const ntfy = await startNtfyFake({ token: 'tk_conformance0000000000000000', keepaliveMs: 2_000 });
    return {
      configure: { server_url: ntfy.url, topic: Array.from({ length: TOPICS }, (_, i) => topic(i + 1)).join(','), token: ntfy.token },
      badCredentials: { token: 'tk_not-the-token-of-this-server' },
      dm: (n, text) => void ntfy.publish(topic(n), text),
      group: () => undefined,
      noGroups: 'an ntfy topic is one conversation: no members, mentions or threads',
      received: (target) =>
        'dm' in target
          ? ntfy
              .messages(topic(target.dm))
              .filter((m) => m.tags?.includes(REPLY_TAG))
              .map((m) => m.message)
          : [],
      dmChat: (n) => topic(n),
      rateLimitOnce: (seconds) => ntfy.failNextPublish(429, seconds),
      // Cuts the subscription stream: the adapter subscribes again from its cursor.
      dropConnection: () => void ntfy.dropConnections(),
      stop: () => ntfy.stop(),
    };
  },
});
