/** The WebSocket of one connection: a connection the reconnect loop already gave up opens nothing. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WebSocketServer } from 'ws';
import { waitFor } from '@talon/testing';
import { MattermostSocket } from '../services/socket.ts';

test('a connection whose link is already aborted (a stop while the token was being checked) opens no socket', async () => {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((resolve) => server.once('listening', resolve));
  let opened = 0;
  server.on('connection', () => opened++);
  try {
    const { port } = server.address() as { port: number };
    const socket = new MattermostSocket(`ws://127.0.0.1:${port}/api/v4/websocket`, 'secret-token');
    const link = { ready: () => undefined, traffic: () => undefined, signal: AbortSignal.abort() };
    let settled = false;
    void socket.connect(link, { onHello: async () => undefined, onEvent: async () => undefined }).then(
      () => (settled = true),
      () => (settled = true),
    );
    await waitFor(() => settled, 2000, 'the aborted connection to settle');
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(opened, 0);
    socket.close();
  } finally {
    for (const client of server.clients) client.terminate();
    await new Promise((resolve) => server.close(resolve));
  }
});
