/**
 * The catch-up after a long gap: the server answers `since` with a capped set (not the oldest posts), so a gap longer
 * than the cap is read page by page — every post once at least, oldest first, the cursor at the newest.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AdapterContext, ChannelKit, InboundMessage } from '@talon/channels';
import { startMattermostFake } from '@talon/testing';
import type { SeenCursor } from '../services/cursor.ts';
import { Receiver } from '../services/receive.ts';
import { mattermostRest } from '../services/rest.ts';
import { person } from './helpers.ts';

/** A context whose fetch is the platform's own (loopback only) and whose journal is a list. */
function contextFor(emitted: InboundMessage[], signal: AbortSignal): AdapterContext {
  return {
    channel: 'mattermost',
    config: {},
    secrets: {},
    signal,
    log: { info() {}, warn() {}, error() {} },
    report() {},
    allowOrigins: [],
    emit: async (m: InboundMessage) => {
      const duplicate = emitted.some((e) => e.platformId === m.platformId);
      if (!duplicate) emitted.push(m);
      return { duplicate };
    },
    fetch: async (r) => {
      const res = await fetch(r.url, { method: r.method ?? 'GET', headers: r.headers ?? {}, signal: r.signal ?? null });
      return {
        status: res.status,
        statusText: res.statusText,
        headers: Object.fromEntries(res.headers),
        body: Buffer.from(await res.arrayBuffer()),
        truncated: false,
        finalUrl: r.url,
      };
    },
  } as AdapterContext;
}

function memoryCursor(floor: number): SeenCursor & { seen: Map<string, number> } {
  const seen = new Map<string, number>();
  return {
    seen,
    get: async (id) => seen.get(id),
    floor: async () => floor,
    initFloor: async () => undefined,
    advance: async (id, at) => void seen.set(id, Math.max(seen.get(id) ?? 0, at)),
  };
}

test('a gap longer than the since cap is read whole, oldest first, in pages', async () => {
  const fake = await startMattermostFake({ sinceLimit: 5 });
  const controller = new AbortController();
  try {
    const old = fake.createChannel('D', [person(1)]);
    for (let i = 0; i < 4; i++) fake.injectPost(old, person(1), `before ${i}`);
    // The fake's clock runs ahead of the wall clock by a millisecond a post at most.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const floor = Date.now();
    // A channel with posts before the gap, and one whose first post is in it.
    const fresh = fake.createChannel('D', [person(2)]);
    const texts = { [old]: [] as string[], [fresh]: [] as string[] };
    for (let i = 0; i < 23; i++) {
      for (const c of [old, fresh]) {
        texts[c]!.push(`gap ${i}`);
        fake.injectPost(c, c === old ? person(1) : person(2), `gap ${i}`);
      }
    }
    const emitted: InboundMessage[] = [];
    const ctx = contextFor(emitted, controller.signal);
    const rest = mattermostRest(ctx, { retryAfterMs: () => undefined } as unknown as ChannelKit, fake.url, fake.token);
    const cursor = memoryCursor(floor);
    const receiver = new Receiver(ctx, rest, cursor, () => fake.bot, { sinceCap: 5, perPage: 4 });
    await receiver.catchUp();
    for (const c of [old, fresh])
      assert.deepEqual(
        emitted.filter((m) => m.chatId === c).map((m) => m.text),
        texts[c],
        `channel ${c}`,
      );
    const paged = fake.calls.filter((c) => c.path.endsWith('/posts') && c.method === 'GET').length;
    assert.ok(paged > 4, `read in pages (${paged} requests)`);
  } finally {
    controller.abort();
    await fake.stop();
  }
});
