/**
 * Persist before acknowledging: the service answers a wake and is killed (SIGKILL) before delivering it; after the
 * restart the wake is delivered, once, exactly as a normal one. Real subprocesses (`node --import tsx bin/talon.ts`)
 * on a temporary TALON_HOME; delivery is observed through a webhook subscription to a 127.0.0.1 receiver. The first
 * process runs with `[hooks] hold_delivery = true`, so "killed before delivery" is certain rather than a race.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { startPostgres, waitFor, type PostgresServer } from '@talon/testing';

const root = path.resolve(import.meta.dirname, '../../..');
const home = mkdtempSync(path.join(tmpdir(), 'talon-wake-crash-'));
const TOKEN = 'hook-token-crash-0123456789abcdefghijk';
const children: ChildProcess[] = [];
/** With TALON_TEST_DB=postgres, both processes run on one database of this process's PostgreSQL. */
let postgres: { server: PostgresServer; url: string } | undefined;

interface Envelope {
  event: string;
  data: { type: string; data: { wakeId: string; text: string } & Record<string, unknown> };
}
const received: Envelope[] = [];
const receiver = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    received.push(JSON.parse(body) as Envelope);
    res.writeHead(200).end();
  });
});

after(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
  receiver.close();
  rmSync(home, { recursive: true, force: true });
  if (postgres) {
    await postgres.server.dropDatabase(postgres.url).catch(() => undefined);
    await postgres.server.stop();
  }
});

/** Starts the service in its own process group; resolves with its base URL once it logs that it listens. */
async function startService(): Promise<{ child: ChildProcess; url: string }> {
  if (process.env.TALON_TEST_DB === 'postgres' && !postgres) {
    const server = await startPostgres();
    postgres = { server, url: await server.createDatabase() };
  }
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/talon.ts'], {
    cwd: root,
    env: { ...process.env, TALON_HOME: home, ...(postgres ? { TALON_DATABASE_URL: postgres.url } : {}) },
    detached: true,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  children.push(child);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the service did not start within 60 s')), 60_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!line.includes('talon is listening')) return;
      clearTimeout(timer);
      resolve(`http://${(JSON.parse(line) as { address: string }).address}`);
    });
    child.once('exit', () => reject(new Error('the service exited early')));
  });
  return { child, url };
}

function writeConfig(hold: boolean): void {
  const lines = ['api_listen = "127.0.0.1:0"', 'log_level = "info"', '[hooks]', 'enabled = true', `token = "${TOKEN}"`, `hold_delivery = ${hold}`];
  writeFileSync(path.join(home, 'config.toml'), [...lines, '[webhooks]', 'allow_hosts = ["127.0.0.1"]', ''].join('\n'));
}

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
const wake = async (url: string, text: string) => {
  const res = await post(`${url}/api/hooks/wake`, { text }, { authorization: `Bearer ${TOKEN}` });
  assert.equal(res.status, 200);
  return ((await res.json()) as { event_id: string }).event_id;
};

test('kill -9 after the wake was answered, before its delivery: delivered once after the restart, like a normal wake', { timeout: 180_000 }, async () => {
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  const target = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  writeConfig(true);
  const first = await startService();
  const sub = await post(`${first.url}/api/webhooks/events`, { event_type: 'custom', url: target, secret: 'a-receiver-secret' });
  assert.equal(sub.status, 201);
  const held = await wake(first.url, 'the nightly build finished');
  // Answered, not delivered: the webhook subscription has journalled nothing.
  const hooks = (await (await fetch(`${first.url}/api/webhooks/events`)).json()) as { webhooks: Array<{ deliveries: Record<string, number> }> };
  assert.deepEqual(hooks.webhooks[0].deliveries, { pending: 0, delivered: 0, failed: 0 });

  const exited = new Promise((resolve) => first.child.once('exit', resolve));
  process.kill(-first.child.pid!, 'SIGKILL');
  await exited;
  assert.equal(received.length, 0);

  writeConfig(false);
  const second = await startService();
  const replayed = (await waitFor(() => received.find((e) => e.data.data?.wakeId === held), 30_000, 'the wake answered before the crash'))!;
  const normal = await wake(second.url, 'a normal wake');
  const fresh = (await waitFor(() => received.find((e) => e.data.data?.wakeId === normal), 30_000, 'a normal wake'))!;

  assert.equal(replayed.event, 'custom');
  assert.equal(replayed.data.type, 'webhook.wake');
  assert.equal(replayed.data.data.text, 'the nightly build finished');
  assert.deepEqual(Object.keys(replayed.data.data).sort(), Object.keys(fresh.data.data).sort(), 'the same shape as a normal wake');
  assert.deepEqual({ ...replayed.data.data, wakeId: 0, text: 0, receivedAt: 0 }, { ...fresh.data.data, wakeId: 0, text: 0, receivedAt: 0 });
  assert.equal(received.filter((e) => e.data.data?.wakeId === held).length, 1, 'delivered once');

  const exitedAgain = new Promise((resolve) => second.child.once('exit', resolve));
  process.kill(-second.child.pid!, 'SIGTERM');
  await exitedAgain;
});
