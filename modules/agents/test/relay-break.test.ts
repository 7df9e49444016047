/**
 * A relayed attach whose owner's stream breaks before the turn's final event (the owner process killed outright: its
 * connections close at once, long before it is found dead) still ends with a final event for the attacher, an error
 * saying the owner could not be followed; one that ends with the turn's own final event gets nothing more.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import pino from 'pino';
import { Relay, OWNER_UNREACHABLE } from '../services/relay.ts';

/** An owner that streams `blocks`, then breaks its connection (or ends it cleanly). */
async function owner(blocks: string[], breaks: boolean): Promise<{ address: string; close(): void }> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const block of blocks) res.write(block);
    setTimeout(() => (breaks ? res.socket?.destroy() : res.end()), 50);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { address: `127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

/** What an attacher of the relaying process receives: each event's name and data, in order. */
async function attachThrough(ownerAddress: string): Promise<Array<[string, unknown]>> {
  const relay = new Relay({
    nodes: { id: 'here', address: async () => ownerAddress } as never,
    log: pino({ level: 'silent' }),
  });
  const app = Fastify();
  app.get('/attach', async (request, reply) => {
    if (!(await relay.attach(request, reply, 'owner'))) return reply.code(502).send();
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  try {
    const res = await fetch(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/attach`, { signal: AbortSignal.timeout(5000) });
    const text = await res.text();
    return [...text.matchAll(/^event: (.*)\ndata: (.*)$/gm)].map((m) => [m[1], JSON.parse(m[2])]);
  } finally {
    await app.close();
  }
}

const chunk = 'event: chunk\ndata: {"content":"hel","done":false}\n\n';

test('an attach relayed from an owner whose stream breaks mid-turn ends with an error event', async () => {
  const up = await owner([chunk], true);
  try {
    const events = await attachThrough(up.address);
    assert.deepEqual(
      events.map(([name]) => name),
      ['chunk', 'error'],
    );
    assert.deepEqual(events[1][1], { error: OWNER_UNREACHABLE, status: 503 });
  } finally {
    up.close();
  }
});

test("an attach relayed from an owner that sent the turn's final event gets nothing after it", async () => {
  const up = await owner([chunk, 'event: done\ndata: {"done":true}\n\n'], false);
  try {
    assert.deepEqual(
      (await attachThrough(up.address)).map(([name]) => name),
      ['chunk', 'done'],
    );
  } finally {
    up.close();
  }
});
