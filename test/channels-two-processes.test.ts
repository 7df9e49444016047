/**
 * One process runs a channel (issue 27): two real service processes (`node --import tsx bin/talon.ts`) on one home,
 * the Telegram adapter configured in config.toml against the Bot API fake. Only one of them polls (the fake counts the
 * 409 Conflicts a second poller causes: none), the other shows the channel on standby naming the holder; messages are
 * answered once each; after kill -9 of the holder the other process takes the channel over and messages keep flowing.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { FakeProvider, freePort, startTelegramFake, waitFor, type TelegramFake } from '@talon/testing';

const root = path.resolve(import.meta.dirname, '..');
const home = mkdtempSync(path.join(tmpdir(), 'talon-channels-two-'));
const fake = new FakeProvider();
const children = new Set<ChildProcess>();
let tg: TelegramFake | undefined;

interface Service {
  name: string;
  url: string;
  child: ChildProcess;
}
interface Detail {
  state: string;
  holder: string | null;
}

/** A service process in its own process group; resolves once /api/health answers 200. */
async function start(name: string, token: string): Promise<Service> {
  const port = await freePort();
  const output: string[] = [];
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/talon.ts'], {
    cwd: root,
    env: { ...process.env, TALON_HOME: home, TALON_API_LISTEN: `127.0.0.1:${port}`, TWO_CHANNELS_KEY: 'sk-test', TWO_CHANNELS_TG: token },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  child.stdout!.on('data', (c: Buffer) => output.push(c.toString()));
  child.stderr!.on('data', (c: Buffer) => output.push(c.toString()));
  const url = `http://127.0.0.1:${port}`;
  await waitFor(async () => (await fetch(`${url}/api/health`)).status === 200, 90_000, `process ${name} to answer`).catch((err: Error) => {
    throw new Error(`${err.message}; exit ${child.exitCode}; output: ${output.join('').slice(-3000)}`);
  });
  return { name, url, child };
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid) process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

const detail = async (s: Service) => (await (await fetch(`${s.url}/api/channels/telegram`)).json()) as Detail;
const nodeOf = (s: Service) => {
  const d = new Database(path.join(home, 'talon.db'), { readonly: true, fileMustExist: true });
  try {
    return (d.prepare("SELECT id FROM kernel_nodes WHERE pid = ? AND state = 'live'").get(s.child.pid) as { id: string } | undefined)?.id;
  } finally {
    d.close();
  }
};

after(async () => {
  for (const child of children) killGroup(child, 'SIGKILL');
  await tg?.stop();
  await fake.stop();
  rmSync(home, { recursive: true, force: true });
});

test('two processes, one Telegram poller; kill -9 of the holder: the other takes over and messages keep flowing', { timeout: 300_000 }, async () => {
  await fake.start();
  fake.setFallback({ text: 'reply' });
  tg = await startTelegramFake();
  writeFileSync(
    path.join(home, 'config.toml'),
    [
      'log_level = "warn"',
      'rate_limit_per_second = 1000000',
      '[default_model]',
      'provider = "openai"',
      'model = "fake-model"',
      `base_url = "${fake.url}/v1"`,
      'api_key_env = "TWO_CHANNELS_KEY"',
      '[llm]',
      'max_retries = 0',
      '[channels.telegram]',
      'token_env = "TWO_CHANNELS_TG"',
      `api_url = "${tg.apiRoot}"`,
      'dm_policy = "open"',
      '',
    ].join('\n'),
  );
  const a = await start('a', tg.token);
  const spawned = await fetch(`${a.url}/api/agents`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ manifest_toml: 'name = "helper"\n[model]\nprovider = "default"\nmodel = "default"\n' }),
  });
  assert.equal(spawned.status, 201);
  const b = await start('b', tg.token);

  /** The process running the channel and the one on standby naming it. */
  const roles = () =>
    waitFor(
      async () => {
        const [da, db] = [await detail(a), await detail(b)];
        if (da.state === 'connected' && db.state === 'standby' && db.holder === nodeOf(a)) return [a, b] as const;
        if (db.state === 'connected' && da.state === 'standby' && da.holder === nodeOf(b)) return [b, a] as const;
        return undefined;
      },
      30_000,
      'one process running the Telegram channel, the other on standby',
    );
  const [holder, standby] = await roles();

  const texts: string[] = [];
  const send = (round: string) => {
    for (const chat of [801, 802]) {
      for (let i = 0; i < 3; i++) {
        const text = `${round}: chat ${chat} message ${i}`;
        texts.push(text);
        tg!.injectMessage({ chat: { id: chat, type: 'private' }, from: { id: chat, is_bot: false, first_name: 'P' }, text });
      }
    }
  };
  send('before');
  await waitFor(() => tg!.sent.length >= 6, 60_000, 'the replies of the first round');
  assert.equal(tg.conflicts, 0, 'a second process polled Telegram');
  const pollsBefore = tg.callsOf('getUpdates').length;

  killGroup(holder.child, 'SIGKILL');
  await new Promise((resolve) => (holder.child.exitCode !== null || holder.child.signalCode !== null ? resolve(null) : holder.child.once('exit', resolve)));
  const killedAt = Date.now();
  // The holder's lease ends after a lease (3 beats of 3 s) at most; its node is found dead after as long: the standby
  // process starts the channel within about two leases.
  await waitFor(async () => (await detail(standby)).state === 'connected', 40_000, 'the standby process to take the channel over');
  assert.ok(Date.now() - killedAt < 30_000, `took over after ${Date.now() - killedAt} ms`);
  assert.ok(tg.callsOf('getUpdates').length > pollsBefore);

  send('after');
  await waitFor(() => tg!.sent.length >= 12, 60_000, 'the replies of the second round');
  assert.equal(tg.conflicts, 0, 'two pollers at some point');

  const d = new Database(path.join(home, 'talon.db'), { readonly: true, fileMustExist: true });
  try {
    for (const text of texts) {
      const rows = d.prepare("SELECT COUNT(*) AS n FROM agents_messages WHERE role = 'User' AND content = ?").get(text) as { n: number };
      assert.equal(rows.n, 1, `'${text}' is in the sessions ${rows.n} times`);
    }
  } finally {
    d.close();
  }
  const replyTargets = tg.sent.map((m) => `${(m.chat as { id: number }).id}:${(m.reply_to_message as { message_id: number } | undefined)?.message_id}`);
  assert.equal(new Set(replyTargets).size, replyTargets.length, `a message was answered twice: ${replyTargets.join(' ')}`);
  assert.equal(replyTargets.length, 12);
});
