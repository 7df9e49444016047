// What the Mattermost adapter's tests share: the modules a kernel needs, and channels on the fake made per test number.
import type { MattermostFake } from '@talon/testing';

export const MODULES = ['agents', 'auth', 'error-envelope', 'secrets', 'net', 'tasks', 'commands', 'bindings', 'channels', 'channel-mattermost'];

export const person = (n: number) => `person${n}`;

/** A direct channel (the bot and one person) and an open channel (the bot and two people) per number, made once. */
export function channelsOf(fake: MattermostFake) {
  const dms = new Map<number, string>();
  const groups = new Map<number, string>();
  return {
    dm: (n: number) => dms.get(n) ?? (dms.set(n, fake.createChannel('D', [person(n)])), dms.get(n)!),
    group: (n: number) => groups.get(n) ?? (groups.set(n, fake.createChannel('O', [person(n), person(n + 1000)])), groups.get(n)!),
  };
}

export const configureFor = (fake: MattermostFake) => ({ token: fake.token, server_url: fake.url });
