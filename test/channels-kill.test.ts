/**
 * Issue 27's kill -9 test: a real service process (`node --import tsx bin/talon.ts`) with the Telegram adapter against
 * the Bot API fake and a slow scripted model; 30 messages from 3 chats, SIGKILL mid-way, a new process on the same
 * home. Every message is in its session exactly once, no reply is sent twice, every reply is sent or marked unknown.
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
const home = mkdtempSync(path.join(tmpdir(), 'talon-channels-kill-'));
const fake = new FakeProvider();
let tg: TelegramFake | undefined;
let child: ChildProcess | undefined;

async function startService(port: number, token: string): Promise<ChildProcess> {
  const output: string[] = [];
  const proc = spawn(process.execPath, ['--import', 'tsx', 'bin/talon.ts'], {
    cwd: root,
    env: { ...process.env, TALON_HOME: home, TALON_API_LISTEN: `127.0.0.1:${port}`, KILL_TEST_KEY: 'sk-test', KILL_TEST_TG: token },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.stdout!.on('data', (c: Buffer) => output.push(c.toString()));
  proc.stderr!.on('data', (c: Buffer) => output.push(c.toString()));
  await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/api/health`)).status === 200, 90_000, 'the service to answer').catch((err: Error) => {
    throw new Error(`${err.message}; exit ${proc.exitCode}; output: ${output.join('').slice(-3000)}`);
  });
  return proc;
}

function killGroup(proc: ChildProcess | undefined, signal: NodeJS.Signals): void {
  try {
    if (proc?.pid) process.kill(-proc.pid, signal);
  } catch {
    // already gone
  }
}

after(async () => {
  killGroup(child, 'SIGKILL');
  await tg?.stop();
  await fake.stop();
  rmSync(home, { recursive: true, force: true });
});

test('kill -9 mid-way: every message in its session once, no reply twice, every reply sent or unknown', { timeout: 300_000 }, async () => {
  await fake.start();
  fake.setFallback({ text: 'slow reply', delayMs: 300 });
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
      'api_key_env = "KILL_TEST_KEY"',
      '[llm]',
      'max_retries = 0',
      '[channels]',
      'rate_per_minute = 1000',
      '[channels.telegram]',
      'token_env = "KILL_TEST_TG"',
      `api_url = "${tg.apiRoot}"`,
      'dm_policy = "open"',
      '',
    ].join('\n'),
  );
  const port = await freePort();
  child = await startService(port, tg.token);
  const spawned = await fetch(`http://127.0.0.1:${port}/api/agents`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ manifest_toml: 'name = "helper"\n[model]\nprovider = "default"\nmodel = "default"\n' }),
  });
  assert.equal(spawned.status, 201);

  const chats = [701, 702, 703];
  const texts: string[] = [];
  for (let i = 0; i < 10; i++) {
    for (const chat of chats) {
      const text = `chat ${chat} message ${i}`;
      texts.push(text);
      tg.injectMessage({ chat: { id: chat, type: 'private' }, from: { id: chat, is_bot: false, first_name: 'P' }, text });
    }
  }
  await waitFor(() => tg!.sent.length >= 6, 60_000, 'some replies before the kill');
  killGroup(child, 'SIGKILL');
  await new Promise((resolve) => child!.once('exit', resolve));
  const sentBeforeKill = tg.sent.length;
  assert.ok(sentBeforeKill < 30, 'killed mid-way');

  child = await startService(port, tg.token);
  const db = () => new Database(path.join(home, 'talon.db'), { readonly: true, fileMustExist: true });
  await waitFor(
    () => {
      const d = db();
      try {
        const open = d.prepare("SELECT COUNT(*) AS n FROM channels_inbound WHERE state IN ('received', 'adopted')").get() as { n: number };
        const total = d.prepare('SELECT COUNT(*) AS n FROM channels_inbound').get() as { n: number };
        const pending = d.prepare("SELECT COUNT(*) AS n FROM channels_outbound WHERE state IN ('queued', 'sending')").get() as { n: number };
        return total.n === 30 && open.n === 0 && pending.n === 0;
      } finally {
        d.close();
      }
    },
    180_000,
    'every message handled after the restart',
  );

  const d = db();
  try {
    // In its session exactly once, as a user message.
    for (const text of texts) {
      const rows = d.prepare("SELECT COUNT(*) AS n FROM agents_messages WHERE role = 'User' AND content = ?").get(text) as { n: number };
      assert.equal(rows.n, 1, `'${text}' is in the sessions ${rows.n} times`);
    }
    // Every reply chunk sent or unknown, none failed or lost.
    const states = d.prepare('SELECT state, COUNT(*) AS n FROM channels_outbound GROUP BY state').all() as Array<{ state: string; n: number }>;
    for (const s of states) assert.ok(['sent', 'unknown'].includes(s.state), `chunks ${s.state}: ${s.n}`);
    const answered = d.prepare("SELECT COUNT(*) AS n FROM channels_inbound WHERE state = 'answered'").get() as { n: number };
    assert.equal(answered.n, 30);
  } finally {
    d.close();
  }
  // No message answered twice on Telegram.
  const replyTargets = tg.sent.map((m) => `${(m.chat as { id: number }).id}:${(m.reply_to_message as { message_id: number } | undefined)?.message_id}`);
  assert.equal(new Set(replyTargets).size, replyTargets.length, `a reply was sent twice: ${replyTargets.join(' ')}`);
});
