// What the Zulip adapter's tests share: the modules a kernel needs, and people and streams on the fake per number.
import type { ZulipFake } from '@talon/testing';

export const MODULES = ['agents', 'auth', 'error-envelope', 'secrets', 'net', 'tasks', 'commands', 'bindings', 'channels', 'channel-zulip'];

export const person = (n: number) => `person${n}@zulip.fake.test`;
export const streamName = (n: number) => `stream-${n}`;

export const configureFor = (fake: ZulipFake) => ({ token: fake.apiKey, server_url: fake.url, bot_email: fake.botEmail });

/** The chat id the adapter gives a DM with person n, and the fake's messages the bot sent there. */
export const dmChat = (fake: ZulipFake, n: number) => `dm:${fake.user(person(n))}`;
export const dmTexts = (fake: ZulipFake, n: number) =>
  fake.sent
    .filter((m) => m.type === 'private' && Array.isArray(m.display_recipient) && m.display_recipient.some((u) => u.email === person(n)))
    .map((m) => m.content);
