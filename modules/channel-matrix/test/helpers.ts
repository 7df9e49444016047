// What the Matrix adapter's tests share: the modules a kernel needs, and rooms on the fake made per test number.
import type { AdapterContext, InboundMessage } from '@talon/channels';
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

/** A context for the adapter's parts on their own: fetch is the platform's (loopback fakes only), emit the test's. */
export function directContext(
  emit: (m: InboundMessage) => Promise<{ duplicate: boolean }>,
  signal: AbortSignal,
  log: Partial<AdapterContext['log']> = {},
): AdapterContext {
  return {
    channel: 'matrix',
    config: {},
    secrets: {},
    signal,
    log: { info() {}, warn() {}, error() {}, ...log },
    fetch: async (r: Parameters<AdapterContext['fetch']>[0]) => {
      const res = await fetch(r.url, {
        method: r.method ?? 'GET',
        headers: r.headers ?? {},
        ...(r.body !== undefined ? { body: r.body as BodyInit } : {}),
        signal: AbortSignal.any([AbortSignal.timeout(r.timeoutMs), ...(r.signal ? [r.signal] : [])]),
      });
      return {
        status: res.status,
        statusText: res.statusText,
        headers: Object.fromEntries(res.headers),
        body: Buffer.from(await res.arrayBuffer()),
        truncated: false,
        finalUrl: r.url,
      };
    },
    emit,
  } as unknown as AdapterContext;
}
