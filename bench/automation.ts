/**
 * Automation figures (issue 11):
 * - the scheduler with 10,000 enabled jobs on a real SQLite file: start-up (the first look at the table), next-run
 *   computation for every job, the tick, all 10,000 due at once after downtime, and how late short-interval jobs
 *   fire (in-process loop with real timers, and end to end in a daemon: slot → the provider receiving the turn);
 * - one event matched against 1,000 triggers;
 * - workflows in a daemon over the fake provider: the overhead per step of a 20-step sequential run (client time
 *   minus the provider's own time), and 10 fan_out steps against a provider that takes 500 ms each.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import type { Queries } from '@talon/module-sdk';
import { SqliteStore } from '../kernel/store/sqlite.ts';
import { FakeProvider } from '@talon/testing';
import { schedulerConfigSchema, type SchedulerConfig } from '../modules/scheduler/config.ts';
import { JobStore, type JobFields, type JobRow } from '../modules/scheduler/services/jobs.ts';
import { RunRows, type Claimed } from '../modules/scheduler/services/runs.ts';
import { Schedules } from '../modules/scheduler/services/spec.ts';
import { Ticker } from '../modules/scheduler/services/ticker.ts';
import { Engine } from '../modules/triggers/services/engine.ts';
import type { KnownEvent } from '../modules/triggers/services/known.ts';
import { normalizePattern } from '../modules/triggers/services/pattern.ts';
import type { Trigger } from '../modules/triggers/services/store.ts';
import { freePort, killTree, percentile, spawnDetached, waitHttp } from './util.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const JOBS = 10_000;
const log = pino({ level: 'silent' });
const config = Object.fromEntries(Object.entries(schedulerConfigSchema.properties).map(([k, v]) => [k, v.default])) as SchedulerConfig;
const ms = (n: number) => n.toFixed(2);
/** The node the bench's tickers claim runs for, and their lease (the kernel's default is irrelevant here: no takeover). */
const NODE = 'bench-node';
const LEASE_MS = 15_000;

/** Wall time, and this process's CPU time (the machine is shared: CPU time leaves out waiting for a core). */
function timed<T>(fn: () => T): [T, number, number] {
  const t = performance.now();
  const cpu = process.cpuUsage();
  const value = fn();
  const used = process.cpuUsage(cpu);
  return [value, performance.now() - t, (used.user + used.system) / 1000];
}

/** As timed, for work that awaits (the store's statements). */
async function timedAsync<T>(fn: () => Promise<T>): Promise<[T, number, number]> {
  const t = performance.now();
  const cpu = process.cpuUsage();
  const value = await fn();
  const used = process.cpuUsage(cpu);
  return [value, performance.now() - t, (used.user + used.system) / 1000];
}

/** CPU time (ms) a process has used so far (Linux /proc, clock ticks of 10 ms). */
function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** The scheduler module's tables, as its migrations make them. */
function migrateScheduler(db: Database.Database): void {
  const dir = path.join(ROOT, 'modules/scheduler/migrations');
  for (const file of readdirSync(dir).sort()) db.exec(readFileSync(path.join(dir, file), 'utf8'));
}

/** A better-sqlite3 file with the scheduler's tables, and the store over it (as the kernel opens it). */
function openScheduler(file: string): { db: Database.Database; store: SqliteStore; jobs: JobStore; runs: RunRows } {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  migrateScheduler(db);
  const store = new SqliteStore(db);
  return { db, store, jobs: new JobStore(store), runs: new RunRows(store) };
}

/**
 * Inserts a job in the caller's transaction (JobStore.create runs on the store itself and reads the row back, so it
 * cannot batch: many inserts share one commit here, as they did before the port).
 */
async function insertJob(t: Queries, i: number, fields: JobFields): Promise<void> {
  const at = new Date().toISOString();
  const columns = Object.keys(fields) as Array<keyof JobFields>;
  await t.run(
    `INSERT INTO scheduler_jobs (id, ${columns.join(', ')}, created_via, created_at, updated_at) VALUES (?, ${columns.map(() => '?').join(', ')}, ?, ?, ?)`,
    [`bench-${i}`, ...columns.map((c) => fields[c]), 'bench', at, at],
  );
}

const wallCpu = ([, wall, cpu]: [unknown, number, number]) => `${ms(wall)} wall, ${ms(cpu)} CPU`;

const ZONES = ['UTC', 'Europe/Paris', 'America/New_York', 'Asia/Tokyo'];
/** The i-th of up to 10,080 different cron expressions. */
const expression = (i: number) => `${i % 60} ${Math.floor(i / 60) % 24} * * ${Math.floor(i / 1440) % 7}`;

/** A job whose expression is one of `distinct` (expression and zone pairs), spread over four time zones. */
function jobFields(i: number, nextRun: number, distinct = JOBS): JobFields {
  const k = i % distinct;
  return {
    name: `job-${i}`,
    agent_id: 'bench',
    workflow_id: null,
    handler: null,
    schedule: expression(Math.floor(k / ZONES.length)),
    kind: 'cron',
    tz: ZONES[k % ZONES.length],
    prompt: '',
    enabled: 1,
    one_shot: 0,
    session_mode: null,
    misfire_policy: null,
    timeout_secs: null,
    anchor: 0,
    next_run: nextRun,
  };
}

/** Next runs of every job after one instant (as a tick computes them), from scratch (a fresh expression cache). */
function nextRunsCold(rows: Array<{ schedule: string; tz: string; anchor: number }>): string {
  const now = Date.now();
  return wallCpu(
    timed(() => {
      const schedules = new Schedules();
      for (const row of rows) schedules.next(schedules.parse(row.schedule, row.tz), row.anchor, now);
    }),
  );
}

async function schedulerFigures(dir: string): Promise<Record<string, string>> {
  const { db, store, jobs, runs } = openScheduler(path.join(dir, 'scheduler.db'));
  const future = Date.now() + 3_600_000;
  // A realistic table: 10,000 jobs over 200 expression and zone pairs (many jobs share "0 9 * * *").
  await store.tx(async (t) => {
    for (let i = 0; i < JOBS; i++) await insertJob(t, i, jobFields(i, future + i, 200));
  });
  const fired: Claimed[] = [];
  const ticker = (schedules = new Schedules()) =>
    new Ticker({
      store,
      jobs,
      runs,
      schedules,
      config: () => config,
      node: NODE,
      leaseMs: LEASE_MS,
      active: () => true,
      fire: (_job, claimed) => void fired.push(...claimed),
      log,
      setTimer: (fn, t) => setTimeout(fn, t),
    });

  // Start-up: the loop's first look at the table (nothing is loaded into memory; next runs are stored).
  const start = await timedAsync(async () => {
    const t = ticker();
    await t.start();
    t.stop();
  });
  // Next-run computation for every job, from scratch; and for 10,000 jobs that all differ (the worst case).
  const nextMs = nextRunsCold(await jobs.list());
  const worstMs = nextRunsCold(Array.from({ length: JOBS }, (_, i) => jobFields(i, 0)));
  // The tick with 10,000 enabled jobs and none due.
  const idle = ticker();
  const ticks: number[] = [];
  for (let i = 0; i < 2000; i++) {
    const t = performance.now();
    await idle.tick();
    ticks.push(performance.now() - t);
  }
  // All 10,000 due at once (the first tick after a long downtime): claimed, next runs computed and stored.
  await store.run('UPDATE scheduler_jobs SET next_run = ?', [Date.now() - 7_200_000]);
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const claimed = await ticker().tick();
  const catchUpMs = performance.now() - t0;
  const catchUpCpu = process.cpuUsage(cpu0);
  db.close();
  return {
    'scheduler start-up with 10,000 enabled jobs (target ≤ 500 ms; next runs are stored, nothing to compute)': wallCpu(start),
    'next-run computation for 10,000 jobs over 200 expressions, from scratch (target ≤ 500 ms)': nextMs,
    'next-run computation for 10,000 jobs that all differ, from scratch (never at start-up)': worstMs,
    'scheduler tick with 10,000 enabled jobs (p50 ms, target ≤ 2)': ms(percentile(ticks, 50)),
    'scheduler tick with 10,000 enabled jobs (p99 ms)': ms(percentile(ticks, 99)),
    '10,000 jobs (200 expressions) due at once after downtime: claimed and rescheduled': `${ms(catchUpMs)} wall, ${ms((catchUpCpu.user + catchUpCpu.system) / 1000)} CPU (${claimed} claimed, ${fired.length} runs)`,
    ...(await firingLateness(dir)),
  };
}

/** The loop with real timers and 200 `every 1s` jobs: how late each fire is after its slot. */
async function firingLateness(dir: string): Promise<Record<string, string>> {
  const { db, store, jobs, runs } = openScheduler(path.join(dir, 'lateness.db'));
  const now = Date.now();
  await store.tx(async (t) => {
    for (let i = 0; i < 200; i++) {
      const anchor = now + Math.floor((i * 1000) / 200);
      await insertJob(t, i, { ...jobFields(i, anchor + 1000), schedule: 'every 1s', kind: 'every', tz: 'UTC', anchor });
    }
  });
  const late: number[] = [];
  // Each run ends as the dispatcher ends one (run row and outcome in one transaction): a run left 'running' would
  // make the job's next slot a skip ("the previous run was still going").
  const ending: Promise<void>[] = [];
  const end = (job: JobRow, run: Claimed) =>
    store.tx(async (t) => {
      if (!(await runs.end(t, run.id, NODE, 'ok', null, Date.now()))) return;
      await jobs.recordOutcome(t, job.id, { ok: true, text: '', at: Date.now() }, { backoffMs: 1000, maxFailures: 5, oneShot: false });
      await runs.prune(t, job.id);
    });
  const ticker = new Ticker({
    store,
    jobs,
    runs,
    schedules: new Schedules(),
    config: () => config,
    node: NODE,
    leaseMs: LEASE_MS,
    active: () => true,
    fire: (job, claimed) => {
      for (const run of claimed) {
        late.push(Date.now() - run.slot);
        ending.push(end(job, run));
      }
    },
    log,
    setTimer: (fn, t) => setTimeout(fn, t),
  });
  await ticker.start();
  await new Promise((r) => setTimeout(r, 5_000));
  ticker.stop();
  await Promise.all(ending);
  db.close();
  return {
    'every-1s jobs: fire lateness after the slot, in-process loop (p50 / p99 / max ms, target ≤ 1000)': `${ms(percentile(late, 50))} / ${ms(percentile(late, 99))} / ${ms(Math.max(...late))} (${late.length} fires)`,
  };
}

function triggerFigures(): Record<string, string> {
  const names = new Map([['owner', 'owner']]);
  const engine = new Engine({ defaultCooldownSecs: () => 0, maxPerEvent: () => 100, agentName: (id) => names.get(id) });
  const patterns = [
    { agent_spawned: { name_pattern: 'worker-??-*' } },
    { task_posted: { assignee_match: 'self' } },
    { content_match: { substring: 'never mentioned' } },
    { memory_update: { key_pattern: 'pref.*' } },
    { event: { type: 'workflow.*' } },
    'lifecycle',
  ];
  const triggers: Trigger[] = Array.from({ length: 1000 }, (_, i) => ({
    id: `t${i}`,
    agent_id: 'owner',
    pattern: normalizePattern(patterns[i % patterns.length]),
    prompt_template: '{{event}}',
    enabled: true,
    fire_count: 0,
    max_fires: 0,
    created_at: '',
    cooldown_secs: 0,
    session_mode: null,
    target_agent_id: null,
    workflow_id: null,
    last_fired_at: null,
    updated_at: '',
  }));
  engine.load(triggers, []);
  const events: KnownEvent[] = [
    { id: '1', type: 'agent.spawned', data: { agentId: 'a', name: 'helper-7' }, at: '', source: 'bench' },
    { id: '2', type: 'task.posted', data: { taskId: 't', title: 'Write the summary of the quarter', assignedTo: 'someone' }, at: '', source: 'bench' },
    { id: '3', type: 'custom', data: { type: 'deploy', data: { env: 'prod', build: 1234 } }, at: '', source: 'bench' },
  ];
  const samples: number[] = [];
  let matched = 0;
  for (let i = 0; i < 6000; i++) {
    const event = { ...events[i % events.length], id: String(i) } as KnownEvent;
    const t = performance.now();
    matched += engine.match(event).length;
    samples.push(performance.now() - t);
  }
  return {
    'one event matched against 1,000 triggers (p50 ms, target ≤ 1)': ms(percentile(samples.slice(600), 50)),
    'one event matched against 1,000 triggers (p99 ms)': `${ms(percentile(samples.slice(600), 99))} (${(matched / 6000).toFixed(0)} fires per event)`,
  };
}

async function daemonFigures(): Promise<Record<string, string>> {
  const fake = new FakeProvider().setFallback({ text: 'step output', usage: { input: 3, output: 2 } });
  await fake.start();
  const port = await freePort();
  const home = mkdtempSync(path.join(tmpdir(), 'talon-bench-automation-'));
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
      '[scheduler]',
      'min_interval_secs = 1',
    ].join('\n'),
  );
  const daemon = spawnDetached(process.execPath, ['--import', 'tsx', 'bin/talon.ts'], { TALON_HOME: home, BENCH_FAKE_KEY: 'x' });
  const url = `http://127.0.0.1:${port}`;
  const post = async <T>(p: string, body: unknown, method = 'POST'): Promise<T> => {
    const r = await fetch(url + p, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (r.status >= 300) throw new Error(`${p} answered ${r.status}: ${await r.text()}`);
    return (await r.json()) as T;
  };
  try {
    await waitHttp(`${url}/api/health`, 60_000);
    const agents: string[] = [];
    for (let i = 0; i < 10; i++) {
      agents.push(
        (await post<{ agent_id: string }>('/api/agents', { manifest_toml: `name = "bench-${i}"\n[model]\nprovider = "default"\nmodel = "default"\n` }))
          .agent_id,
      );
    }
    // The same turns sent as plain blocking messages: the agent loop's own overhead, for comparison.
    const direct: number[] = [];
    const cpuBeforeDirect = processCpuMs(daemon.pid!);
    for (let i = 0; i < 120; i++) {
      const before = fake.requests.length;
      const t = performance.now();
      await post(`/api/agents/${agents[i % 10]}/message`, { message: 'continue: go' });
      const provider = fake.requests.slice(before).reduce((n, r) => n + (r.ms ?? 0), 0);
      if (i >= 20) direct.push(performance.now() - t - provider);
    }
    const directCpu = (processCpuMs(daemon.pid!) - cpuBeforeDirect) / 120;
    const sequential = await post<{ workflow_id: string }>('/api/workflows', {
      name: 'twenty',
      steps: Array.from({ length: 20 }, (_, i) => ({ name: `s${i}`, agent_id: agents[i % 10], prompt: 'continue: {{input}}' })),
    });
    const overheads: number[] = [];
    const machinery: number[] = [];
    const cpuBeforeRuns = processCpuMs(daemon.pid!);
    for (let round = 0; round < 12; round++) {
      const before = fake.requests.length;
      const t = performance.now();
      const res = await post<{ status: string; run_id: string }>(`/api/workflows/${sequential.workflow_id}/run`, { input: 'go' });
      const total = performance.now() - t;
      if (res.status !== 'completed') throw new Error(`sequential run ${res.status}`);
      const provider = fake.requests.slice(before).reduce((n, r) => n + (r.ms ?? 0), 0);
      const detail = (await (await fetch(`${url}/api/workflows/runs/${res.run_id}`)).json()) as { step_results: Array<{ duration_ms: number }> };
      const turns = detail.step_results.reduce((n, r) => n + r.duration_ms, 0);
      if (round >= 2) overheads.push((total - provider) / 20);
      if (round >= 2) machinery.push((total - turns) / 20);
    }
    const stepCpu = (processCpuMs(daemon.pid!) - cpuBeforeRuns) / 240;
    const fan = await post<{ workflow_id: string }>('/api/workflows', {
      name: 'fan',
      steps: agents.map((a, i) => ({ name: `f${i}`, agent_id: a, mode: 'fan_out' })),
    });
    fake.setFallback({ text: 'slow output', delayMs: 500 });
    const fanTimes: number[] = [];
    for (let round = 0; round < 3; round++) {
      const t = performance.now();
      const res = await post<{ status: string }>(`/api/workflows/${fan.workflow_id}/run`, { input: 'go' });
      if (res.status !== 'completed') throw new Error(`fan_out run ${res.status}`);
      fanTimes.push(performance.now() - t);
    }
    fake.setFallback({ text: 'tick' });
    const lateness = await daemonLateness(post, agents[0], fake);
    return {
      '20-step sequential workflow, overhead per step over the provider (p50 ms, target ≤ 5)': ms(percentile(overheads, 50)),
      '20-step sequential workflow, overhead per step (max of 10 runs, ms)': ms(Math.max(...overheads)),
      '20-step sequential workflow, time per step outside the step turns (p50 ms: the workflow machinery)': ms(percentile(machinery, 50)),
      'for comparison: a blocking message, overhead over the provider (p50 ms)': ms(percentile(direct, 50)),
      "daemon CPU per workflow step / per blocking message (ms; the step's turn included)": `${ms(stepCpu)} / ${ms(directCpu)}`,
      '10 fan_out steps, provider 500 ms each (ms, target ≤ 700)': fanTimes.map(ms).join(' / '),
      ...lateness,
    };
  } finally {
    await killTree(daemon);
    await fake.stop();
    rmSync(home, { recursive: true, force: true });
  }
}

/** An `every 1s` job in the daemon: each turn's arrival at the provider, minus its slot. */
async function daemonLateness(
  post: <T>(p: string, body: unknown, method?: string) => Promise<T>,
  agent: string,
  fake: FakeProvider,
): Promise<Record<string, string>> {
  const before = fake.requests.length;
  const arrivals: number[] = [];
  const recorder = setInterval(() => {
    while (before + arrivals.length < fake.requests.length) arrivals.push(Date.now());
  }, 1);
  const job = await post<{ id: string; next_run: string }>('/api/schedules', { agent_id: agent, cron: 'every 1s', prompt: 'tick' });
  await new Promise((r) => setTimeout(r, 6_500));
  clearInterval(recorder);
  await post(`/api/schedules/${job.id}`, {}, 'DELETE').catch(() => undefined);
  const first = Date.parse(job.next_run);
  const late = arrivals.map((t, i) => t - (first + i * 1000));
  return {
    'every-1s job in the daemon: slot → turn at the provider (p50 / max ms, target ≤ 1000)': `${ms(percentile(late, 50))} / ${ms(Math.max(...late))} (${late.length} fires)`,
  };
}

export async function automationBench(): Promise<Record<string, string>> {
  const dir = mkdtempSync(path.join(tmpdir(), 'talon-bench-scheduler-'));
  try {
    return { ...(await schedulerFigures(dir)), ...triggerFigures(), ...(await daemonFigures()) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
