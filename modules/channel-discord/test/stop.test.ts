/**
 * stop() ends the connection for good: every socket closed when it returns, no reconnect afterwards (@discordjs/ws
 * reconnects 500 ms after a drop and has no stopped state of its own), and nothing left that keeps a process alive.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { startDiscordFake, waitFor, type DiscordFake } from '@talon/testing';
import { startDiscord } from '../services/connection.ts';
import { context } from './context.ts';

/** Three times the library's reconnect delay: a reconnect left running would show up within it. */
const QUIET_MS = 1_500;

async function assertQuiet(fake: DiscordFake) {
  // The client has closed its socket when stop() returns; the fake notes the close a moment later.
  await waitFor(() => fake.openSockets() === 0, 1_000, 'no Gateway socket open once stop() returned');
  const seen = fake.connections();
  await sleep(QUIET_MS);
  assert.equal(fake.connections(), seen, 'no connection attempt after stop');
  assert.equal(fake.openSockets(), 0);
}

async function connected(fake: DiscordFake) {
  const states: string[] = [];
  const controller = new AbortController();
  const connection = await startDiscord(context(fake.api, fake.token, controller, states));
  await waitFor(() => states.includes('connected'), 10_000, 'connected');
  return { connection, controller, states };
}

test('stopped as the channels module stops it (abort, then stop) before the Gateway is up: no socket, no reconnect', async () => {
  const fake = await startDiscordFake({ heartbeatInterval: 200 });
  try {
    const controller = new AbortController();
    const connection = await startDiscord(context(fake.api, fake.token, controller));
    controller.abort();
    await connection.stop();
    await assertQuiet(fake);
  } finally {
    await fake.stop();
  }
});

test('stopped during the WebSocket handshake: the socket that opens afterwards is closed, and stop waits for it', async () => {
  const fake = await startDiscordFake({ heartbeatInterval: 200 });
  try {
    fake.holdHandshakes(true);
    const connection = await startDiscord(context(fake.api, fake.token, new AbortController()));
    await waitFor(() => fake.connections() === 1, 10_000, 'the handshake under way');
    let stopped = false;
    const stopping = connection.stop().then(() => (stopped = true));
    await sleep(200);
    assert.equal(stopped, false, 'stop waits for the socket in its handshake');
    fake.holdHandshakes(false);
    await stopping;
    await assertQuiet(fake);
    assert.ok(!fake.calls.some((c) => c.method === 'gateway op 2'), 'the stopped connection never identified');
  } finally {
    await fake.stop();
  }
});

test('stopped while a resume is scheduled after a drop: the library does not reconnect afterwards', async () => {
  const fake = await startDiscordFake({ heartbeatInterval: 200 });
  try {
    const { connection, states } = await connected(fake);
    fake.dropConnections();
    // The library saw the close and waits its 500 ms before resuming.
    await waitFor(() => states.at(-1) === 'connecting', 5_000, 'the drop seen');
    await connection.stop();
    await assertQuiet(fake);
  } finally {
    await fake.stop();
  }
});

test('stopped when connected: the socket is closed normally and stays closed', async () => {
  const fake = await startDiscordFake({ heartbeatInterval: 200 });
  try {
    const { connection, controller } = await connected(fake);
    controller.abort();
    await Promise.all([connection.stop(), connection.stop()]);
    await assertQuiet(fake);
  } finally {
    await fake.stop();
  }
});

test('a process that starts connections and stops them (and the fake) exits by itself: no handle is left', async () => {
  const script = fileURLToPath(new URL('./fixtures/start-stop.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += String(d)));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
  clearTimeout(timer);
  assert.match(out, /stopped/, 'the script ran to its end');
  assert.deepEqual([code, signal], [0, null], 'exited by itself, not killed after 30 s');
});
