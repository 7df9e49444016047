/** The catch-up reads a whole gap: a history page holds only the newest messages of it. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AdapterContext, InboundMessage } from '@talon/channels';
import type { SeenCursor } from '../services/cursor.ts';
import { Receiver, type RcMessage } from '../services/receive.ts';
import type { RocketChatRest } from '../services/rest.ts';

test('a gap longer than a history page is read whole, oldest first, before the cursor moves past it', async () => {
  const start = Date.parse('2026-01-01T00:00:00Z');
  const room: RcMessage[] = Array.from({ length: 250 }, (_, i) => ({
    _id: `m${i}`,
    rid: 'r1',
    msg: `hello ${i}`,
    ts: new Date(start + (i + 1) * 1000).toISOString(),
    u: { _id: 'alice', username: 'alice' },
  }));
  // Rocket.Chat's history: messages after `oldest`, newest first, `count` of them from `offset`.
  const rest: RocketChatRest = {
    async call<T>(_method: string, path: string) {
      if (path === '/subscriptions.get') return { data: { update: [{ rid: 'r1', t: 'd' }] } as T };
      const q = new URL(path, 'http://x').searchParams;
      const oldest = Date.parse(q.get('oldest')!);
      const offset = Number(q.get('offset') ?? 0);
      const found = room.filter((m) => Date.parse(m.ts as string) > oldest).reverse();
      return { data: { messages: found.slice(offset, offset + Number(q.get('count') ?? 20)) } as T };
    },
  };
  const seen = new Map<string, number>();
  const cursor: SeenCursor = {
    get: async (rid) => seen.get(rid),
    floor: async () => start,
    initFloor: async () => undefined,
    advance: async (rid, at) => void seen.set(rid, Math.max(seen.get(rid) ?? 0, at)),
  };
  const emitted: InboundMessage[] = [];
  const ctx = { signal: new AbortController().signal, emit: async (m: InboundMessage) => void emitted.push(m) } as unknown as AdapterContext;
  await new Receiver(ctx, rest, cursor, 'bot').catchUp();
  assert.deepEqual(
    emitted.map((m) => m.platformId),
    room.map((m) => m._id),
  );
});
