/**
 * Channels figures (issue 27, "Speed"), against a real service process (`npm start`'s build and node options) with the
 * Telegram adapter polling the Bot API fake and the scripted provider, both in this process on 127.0.0.1:
 * - inbound message → the provider request of its turn: from the fake answering the open getUpdates with the update
 *   (the fake answers an open poll at once, as Telegram does) to the provider receiving the turn's request; both
 *   instants are taken on this process's clock, so the figure holds everything in between (the adapter, the journal
 *   commit, policy, adoption, the tasks lane, the runner) and nothing is subtracted. Sequential, p50/p99;
 * - 200 messages/s for 30 s across 20 chats: each message once in its chat's session, the replies of each chat in the
 *   order of its messages (the fake's sendMessage log), RSS after gc at the end against after a warm-up;
 * - an idle configured adapter: the process's RSS after gc with [channels.telegram] configured and connected, against
 *   the same service without it, the median of several processes each.
 * The service process is started with --expose-gc and bench/channels/gc.mjs, which runs gc on SIGUSR2.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { FakeProvider, startTelegramFake, waitFor, type TelegramFake } from '@talon/testing';
import { cpuMs, freePort, killTree, median, percentile, rssMb, startScriptNodeArgs, waitHttp } from './util.ts';

const root = path.resolve(import.meta.dirname, '..');
const LATENCY_WARMUP = 30;
const LATENCY_SAMPLES = 300;
const LATENCY_CHATS = 10;
const LOAD_RATE = 200;
const LOAD_SECONDS = 30;
const LOAD_CHATS = 20;
const WARMUP_SECONDS = 5;
const IDLE_PROCESSES = 3;
const IDLE_SETTLE_MS = 5_000;
/** Telegram's own pace (the adapter's limiter: 1 message a second per chat) bounds how fast a backlog drains. */
const DRAIN_MS = 900_000;

interface Service {
  url: string;
  pid: number;
  home: string;
  /** RSS in MB after two full collections. */
  rssAfterGc(): Promise<number>;
  db(): Database.Database;
  stop(): Promise<void>;
}

async function startService(fake: FakeProvider, tg?: TelegramFake): Promise<Service> {
  const port = await freePort();
  const home = mkdtempSync(path.join(tmpdir(), 'talon-bench-channels-'));
  const telegram = tg ? ['[channels.telegram]', 'token_env = "BENCH_TG_TOKEN"', `api_url = "${tg.apiRoot}"`, 'dm_policy = "open"'] : [];
  writeFileSync(
    path.join(home, 'config.toml'),
    [
      `api_listen = "127.0.0.1:${port}"`,
      'log_level = "warn"',
      'rate_limit_per_second = 1000000',
      '[default_model]',
      'provider = "openai"',
      'model = "fake-model"',
      `base_url = "${fake.url}/v1"`,
      'api_key_env = "BENCH_FAKE_KEY"',
      '[llm]',
      'max_retries = 0',
      '[channels]',
      // 10 messages a second per sender in the load run: the per-sender limit is not what is measured.
      'rate_per_minute = 10000',
      ...telegram,
      '',
    ].join('\n'),
  );
  const args = [...startScriptNodeArgs(), '--expose-gc', '--import', path.join(root, 'bench/channels/gc.mjs'), 'scripts/start.mjs'];
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, TALON_HOME: home, BENCH_FAKE_KEY: 'x', BENCH_TG_TOKEN: tg?.token ?? '' },
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let errors = '';
  child.stderr!.on('data', (c: Buffer) => (errors = (errors + c.toString()).slice(-3000)));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await killTree(child);
    rmSync(home, { recursive: true, force: true });
  };
  try {
    await waitHttp(`${url}/api/health`, 120_000, 50);
    const spawned = await fetch(`${url}/api/agents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ manifest_toml: 'name = "helper"\n[model]\nprovider = "default"\nmodel = "default"\n' }),
    });
    if (spawned.status !== 201) throw new Error(`spawning the agent answered ${spawned.status}: ${await spawned.text()}`);
    if (tg)
      await waitFor(
        async () => ((await (await fetch(`${url}/api/channels/telegram`)).json()) as { state: string }).state === 'connected',
        60_000,
        'telegram connected',
      );
  } catch (err) {
    await stop();
    throw new Error(`${(err as Error).message}; service stderr: ${errors}`);
  }
  return {
    url,
    pid: child.pid!,
    home,
    async rssAfterGc() {
      process.kill(child.pid!, 'SIGUSR2');
      await sleep(500);
      return rssMb(child.pid!);
    },
    db: () => new Database(path.join(home, 'talon.db'), { readonly: true, fileMustExist: true }),
    stop,
  };
}

/** A check polled every `everyMs` (the journal's database is opened for each look: not every 20 ms). */
async function until(check: () => boolean, timeoutMs: number, what: string, everyMs = 250): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !check(); await sleep(everyMs)) if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
}

/** Sequential messages; each one's time from the fake answering the poll to the provider receiving the turn. */
async function latency(fake: FakeProvider, tg: TelegramFake, count: number, first: number): Promise<number[]> {
  const out: number[] = [];
  let lastUpdate = Math.max(-1, ...tg.callsOf('getUpdates').map((c) => Number(c.params.offset ?? 0) - 1));
  for (let i = 0; i < count; i++) {
    const chat = 5000 + ((first + i) % LATENCY_CHATS);
    // The adapter has confirmed the last update and its next poll (a long one) is open: the inject answers it at once.
    await waitFor(
      () => tg.callsOf('getUpdates').some((c) => Number(c.params.timeout ?? 0) > 0 && Number(c.params.offset ?? 0) > lastUpdate),
      10_000,
      'the next poll',
    );
    const seen = fake.requests.length;
    const sent = tg.sent.length;
    const text = `latency ${first + i}`;
    const started = performance.now();
    lastUpdate = tg.injectMessage({ chat: { id: chat, type: 'private' }, from: { id: chat, is_bot: false, first_name: 'P' }, text }).update_id;
    const request = await waitFor(() => fake.requests[seen], 10_000, `the turn of '${text}'`);
    if (!JSON.stringify(request.body.messages).includes(text)) throw new Error(`the provider's request after '${text}' is not its turn`);
    out.push(request.startedAt! - started);
    await waitFor(() => tg.sent.length > sent, 10_000, `the reply to '${text}'`);
  }
  return out;
}

interface Load {
  /** message_ids injected per chat, in order. */
  perChat: Map<number, number[]>;
  texts: string[];
}

/** `rate` messages a second for `seconds`, round-robin over the chats, in 50 ms ticks. */
async function load(tg: TelegramFake, rate: number, seconds: number, prefix: string, into: Load): Promise<void> {
  const tickMs = 50;
  const perTick = (rate * tickMs) / 1000;
  const started = performance.now();
  for (let tick = 0, n = 0; tick < (seconds * 1000) / tickMs; tick++) {
    for (let j = 0; j < perTick; j++, n++) {
      const chat = 7000 + (n % LOAD_CHATS);
      const text = `${prefix} ${n} chat ${chat}`;
      const update = tg.injectMessage({ chat: { id: chat, type: 'private' }, from: { id: chat, is_bot: false, first_name: 'P' }, text });
      const ids = into.perChat.get(chat) ?? [];
      ids.push((update.message as { message_id: number }).message_id);
      into.perChat.set(chat, ids);
      into.texts.push(text);
    }
    const due = started + (tick + 1) * tickMs;
    await sleep(Math.max(0, due - performance.now()));
  }
}

/** Every message answered: the journal has no row left open and every reply went out. */
async function drained(service: Service, messages: number, tg: TelegramFake, sentBefore: number): Promise<number> {
  const started = performance.now();
  await until(
    () => {
      const db = service.db();
      try {
        const open = db.prepare("SELECT COUNT(*) AS n FROM channels_inbound WHERE state IN ('received', 'adopted')").get() as { n: number };
        const pending = db.prepare("SELECT COUNT(*) AS n FROM channels_outbound WHERE state IN ('queued', 'sending')").get() as { n: number };
        return open.n === 0 && pending.n === 0 && tg.sent.length >= sentBefore + messages;
      } finally {
        db.close();
      }
    },
    DRAIN_MS,
    `${messages} messages answered`,
  );
  return performance.now() - started;
}

const f1 = (n: number) => n.toFixed(1);
const f2 = (n: number) => n.toFixed(2);
const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');

export async function channelsBench(): Promise<Record<string, string>> {
  const figures: Record<string, string> = {};
  const fake = new FakeProvider().setFallback({ text: 'pong', usage: { input: 3, output: 1 } });
  await fake.start();
  try {
    // 1. Latency.
    {
      const tg = await startTelegramFake();
      const service = await startService(fake, tg);
      try {
        await latency(fake, tg, LATENCY_WARMUP, 0);
        const cpuBefore = cpuMs(service.pid);
        const ms = await latency(fake, tg, LATENCY_SAMPLES, LATENCY_WARMUP);
        // The service's own CPU per message (its whole turn, reply and polls included): against the wall-clock latency,
        // what is the service's work and what is waiting for a core on a loaded machine.
        const cpuPerMessage = (cpuMs(service.pid) - cpuBefore) / LATENCY_SAMPLES;
        const [p50, p99] = [percentile(ms, 50), percentile(ms, 99)];
        figures[`inbound → provider request, ${LATENCY_SAMPLES} sequential: p50 / p90 / p99 / max (ms)`] =
          `${f2(p50)} / ${f2(percentile(ms, 90))} / ${f2(p99)} / ${f2(Math.max(...ms))}`;
        figures['  targets p50 ≤ 5, p99 ≤ 20'] = `${verdict(p50 <= 5)}, ${verdict(p99 <= 20)}`;
        figures["  the service's CPU per message, whole turn (ms); machine load average"] =
          `${f2(cpuPerMessage)}; ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores`;
      } finally {
        await service.stop();
        await tg.stop();
      }
    }

    // 2. Load.
    {
      const tg = await startTelegramFake();
      const service = await startService(fake, tg);
      try {
        const warm: Load = { perChat: new Map(), texts: [] };
        await load(tg, LOAD_RATE, WARMUP_SECONDS, 'warm-up', warm);
        await drained(service, warm.texts.length, tg, 0);
        const rssWarm = await service.rssAfterGc();
        const sentBefore = tg.sent.length;
        const run: Load = { perChat: new Map(), texts: [] };
        const started = performance.now();
        await load(tg, LOAD_RATE, LOAD_SECONDS, 'load', run);
        const injectS = (performance.now() - started) / 1000;
        const journaledS = await journaledBy(service, warm.texts.length + run.texts.length, started);
        const drainMs = await drained(service, run.texts.length, tg, sentBefore);
        const rssEnd = await service.rssAfterGc();

        const { once, misplaced, counts } = adoption(service, [...warm.texts, ...run.texts]);
        const outOfOrder = inOrder(tg, mergeLoads(warm, run));
        const growth = ((rssEnd - rssWarm) / rssWarm) * 100;
        figures[`load: ${run.texts.length} messages at ${LOAD_RATE}/s over ${LOAD_CHATS} chats, injected in (s)`] = f1(injectS);
        figures['  journaled (committed, offset confirmed) by (s from the first message)'] = f1(journaledS);
        figures['  all answered by (s from the first message; Telegram paces a chat at 1 reply/s)'] = f1((drainMs + injectS * 1000) / 1000);
        figures['  each message once in its chat session'] =
          `${verdict(once && !misplaced)} (${counts.once} once, ${counts.missing} missing, ${counts.twice} more than once, ${misplaced} in another chat's session)`;
        figures['  replies in order per chat'] = outOfOrder.length ? `MISSED (chats ${outOfOrder.join(', ')})` : 'met';
        figures['  RSS after warm-up / at the end, after gc (MB); growth (%)'] =
          `${f1(rssWarm)} / ${f1(rssEnd)}; ${f1(growth)} (target ≤ 10: ${verdict(growth <= 10)})`;
      } finally {
        await service.stop();
        await tg.stop();
      }
    }

    // 3. Idle cost of a configured adapter: alternating processes without and with it.
    {
      const without: number[] = [];
      const withIt: number[] = [];
      for (let i = 0; i < IDLE_PROCESSES; i++) {
        for (const configured of [false, true]) {
          const tg = configured ? await startTelegramFake() : undefined;
          const service = await startService(fake, tg);
          try {
            await sleep(IDLE_SETTLE_MS);
            (configured ? withIt : without).push(await service.rssAfterGc());
          } finally {
            await service.stop();
            await tg?.stop();
          }
        }
      }
      const cost = median(withIt) - median(without);
      figures[`idle RSS after gc, median of ${IDLE_PROCESSES}: without / with telegram configured (MB)`] = `${f1(median(without))} / ${f1(median(withIt))}`;
      figures['  idle adapter cost (MB, target ≤ 5)'] =
        `${f1(cost)} (${verdict(cost <= 5)}; samples without ${without.map(f1).join(' ')}, with ${withIt.map(f1).join(' ')})`;
    }
  } finally {
    await fake.stop();
  }
  return figures;
}

/** Seconds from `started` until `total` inbound rows are in the journal. */
async function journaledBy(service: Service, total: number, started: number): Promise<number> {
  await until(
    () => {
      const db = service.db();
      try {
        return (db.prepare('SELECT COUNT(*) AS n FROM channels_inbound').get() as { n: number }).n >= total;
      } finally {
        db.close();
      }
    },
    DRAIN_MS,
    `${total} messages journaled`,
    50,
  );
  return (performance.now() - started) / 1000;
}

/** How often each text is a user message, and whether it sits in its own chat's session. */
function adoption(service: Service, texts: string[]) {
  const db = service.db();
  try {
    const rows = db
      .prepare(
        `SELECT m.content AS content, s.chat_id AS chat, COUNT(*) AS n FROM agents_messages m
         LEFT JOIN channels_sessions s ON s.session_id = m.session_id AND s.channel = 'telegram'
         WHERE m.role = 'User' GROUP BY m.content, s.chat_id`,
      )
      .all() as Array<{ content: string; chat: string | null; n: number }>;
    const seen = new Map<string, number>();
    let misplaced = 0;
    for (const r of rows) {
      seen.set(r.content, (seen.get(r.content) ?? 0) + r.n);
      if (r.chat === null || !r.content.endsWith(` chat ${r.chat}`)) misplaced += r.n;
    }
    const counts = { once: 0, missing: 0, twice: 0 };
    for (const t of texts) {
      const n = seen.get(t) ?? 0;
      if (n === 1) counts.once++;
      else if (n === 0) counts.missing++;
      else counts.twice++;
    }
    return { once: counts.once === texts.length, misplaced, counts };
  } finally {
    db.close();
  }
}

function mergeLoads(a: Load, b: Load): Map<number, number[]> {
  const out = new Map<number, number[]>();
  for (const l of [a, b]) for (const [chat, ids] of l.perChat) out.set(chat, [...(out.get(chat) ?? []), ...ids]);
  return out;
}

/** The chats whose replies (what each one answers, in the fake's send order) differ from their messages' order. */
function inOrder(tg: TelegramFake, perChat: Map<number, number[]>): number[] {
  const answered = new Map<number, number[]>();
  for (const m of tg.sent) {
    const chat = (m.chat as { id: number }).id;
    const to = (m.reply_to_message as { message_id: number } | undefined)?.message_id;
    if (to === undefined) continue;
    const list = answered.get(chat) ?? [];
    list.push(to);
    answered.set(chat, list);
  }
  return [...perChat].filter(([chat, ids]) => JSON.stringify(answered.get(chat) ?? []) !== JSON.stringify(ids)).map(([chat]) => chat);
}
