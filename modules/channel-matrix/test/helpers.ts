// What the Matrix adapter's tests share: the modules a kernel needs, and rooms on the fake made per test number.
import type { MatrixFake } from '@talon/testing';

export const MODULES = ['agents', 'auth', 'error-envelope', 'secrets', 'net', 'tasks', 'commands', 'bindings', 'channels', 'channel-matrix'];

export const person = (n: number) => `@person${n}:fake.matrix.test`;

/** A direct room (the bot and one person) and a group room (the bot and two people) per number, made once. */
export function roomsOf(fake: MatrixFake) {
  const dms = new Map<number, string>();
  const groups = new Map<number, string>();
  return {
    dm: (n: number) => dms.get(n) ?? (dms.set(n, fake.createRoom({ members: [person(n)] })), dms.get(n)!),
    group: (n: number) => groups.get(n) ?? (groups.set(n, fake.createRoom({ members: [person(n), person(n + 1000)] })), groups.get(n)!),
  };
}

export const configureFor = (fake: MatrixFake) => ({ token: fake.token, homeserver_url: fake.url, user_id: fake.userId });
