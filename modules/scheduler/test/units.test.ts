/** The scheduler's parts on a real SQLite file: times, claims by two nodes, backoff, a job that cannot be planned. */
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import pino from 'pino';
import { openTestStore, type TestStore } from '@talon/testing';
import { schedulerConfigSchema, type SchedulerConfig } from '../config.ts';
import { JobStore, type JobFields, type JobRow } from '../services/jobs.ts';
import { RunRows, type Claimed } from '../services/runs.ts';
import { Schedules } from '../services/spec.ts';
import { Ticker } from '../services/ticker.ts';

const config = Object.fromEntries(Object.entries(schedulerConfigSchema.properties).map(([k, v]) => [k, v.default])) as SchedulerConfig;
const log = pino({ level: 'silent' });

const opened: TestStore[] = [];
afterEach(() => {
  for (const s of opened.splice(0)) s.close();
});

/** The scheduler's tables on a new database file (the module's migrations applied); with `file`, another connection to it. */
function open(file?: string): TestStore {
  const s = file ? openTestStore([], file) : openTestStore([path.join(import.meta.dirname, '..')]);
  opened.push(s);
  return s;
}

/** A node's ticker on the store: `fire` gets what it claims. */
function ticker(s: TestStore, node: string, fire: (job: JobRow, runs: Claimed[]) => void): Ticker {
  return new Ticker({
    store: s.store,
    jobs: new JobStore(s.store),
    runs: new RunRows(s.store),
    schedules: new Schedules(),
    config: () => config,
    node,
    leaseMs: 6000,
    active: () => true,
    fire,
    log,
    setTimer: setTimeout,
  });
}

function fields(over: Partial<JobFields>): JobFields {
  return {
    name: 'job',
    agent_id: 'a',
    workflow_id: null,
    handler: null,
    schedule: '0 * * * *',
    kind: 'cron',
    tz: 'UTC',
    prompt: '',
    enabled: 1,
    one_shot: 0,
    session_mode: null,
    misfire_policy: null,
    timeout_secs: null,
    anchor: 0,
    next_run: 0,
    ...over,
  };
}

test('cron times: time zones with DST, POSIX day-of-week (0 and 7 are Sunday), either day field may match, nicknames', () => {
  const s = new Schedules();
  const at = (iso: string) => Date.parse(iso);
  const next = (expr: string, tz: string | null, after: string) => new Date(s.next(s.parse(expr, tz), 0, at(after))!).toISOString();
  assert.equal(next('0 9 * * *', 'Asia/Tokyo', '2026-11-23T13:00:00Z'), '2026-11-24T00:00:00.000Z');
  assert.equal(next('0 9 * * *', 'America/New_York', '2026-03-07T00:00:00Z'), '2026-03-07T14:00:00.000Z', 'EST');
  assert.equal(next('0 9 * * *', 'America/New_York', '2026-03-08T12:00:00Z'), '2026-03-08T13:00:00.000Z', 'EDT after the change');
  assert.equal(next('30 2 * * *', 'Europe/Berlin', '2026-03-29T00:00:00Z'), '2026-03-29T01:00:00.000Z', 'a skipped local time runs at the next valid one');
  assert.equal(next('0 12 * * 0', null, '2026-11-23T13:00:00Z'), '2026-11-29T12:00:00.000Z', '0 = Sunday');
  assert.equal(next('0 12 * * 7', null, '2026-11-23T13:00:00Z'), '2026-11-29T12:00:00.000Z', '7 = Sunday');
  assert.equal(next('0 12 * * 1-5', null, '2026-11-28T13:00:00Z'), '2026-11-30T12:00:00.000Z', 'weekdays skip the weekend');
  assert.equal(next('0 0 13 * 5', null, '2026-11-23T13:00:00Z'), '2026-11-27T00:00:00.000Z', 'Friday matches although it is not the 13th');
  assert.equal(next('@daily', null, '2026-11-23T13:00:00Z'), '2026-11-24T00:00:00.000Z');
  const every = s.parse('every 10m', null);
  assert.equal(s.next(every, 1_000, 1_000), 601_000, 'slots count from the anchor');
  assert.equal(s.next(every, 1_000, 1_300_000), 1_801_000);
  assert.equal(new Date(s.parse('at 2030-06-01T09:00:00', 'Europe/Paris').at).toISOString(), '2030-06-01T07:00:00.000Z');
});

test('two nodes on one database: every due job is claimed and fired exactly once, with one run row per slot', async () => {
  const s = open();
  const other = open(s.file);
  const jobs = new JobStore(s.store);
  const jobsB = new JobStore(other.store);
  const now = Date.now();
  for (let i = 0; i < 300; i++) await jobs.create(fields({ name: `j${i}`, next_run: now - 1000 }), 'test');
  // Both nodes see the same due jobs before either claims (the race), then both try each claim.
  const seenA = await jobs.due(now, 1000);
  const seenB = await jobsB.due(now, 1000);
  assert.equal(seenA.length, 300);
  let won = 0;
  for (let i = 0; i < 300; i++) {
    const next = now + 3_600_000;
    won +=
      Number(await jobs.claim(s.store, seenA[i].id, seenA[i].next_run!, next)) + Number(await jobsB.claim(other.store, seenB[i].id, seenB[i].next_run!, next));
  }
  assert.equal(won, 300, 'one winner per job');
  // The tickers of both nodes, on fresh due jobs: each fires once between them.
  for (let i = 0; i < 300; i++) await jobs.create(fields({ name: `k${i}`, next_run: now - 500 }), 'test');
  const fired: string[] = [];
  const fire = (job: JobRow) => void fired.push(job.id);
  await Promise.all([ticker(s, 'node-a', fire).tick(), ticker(other, 'node-b', fire).tick()]);
  assert.equal(fired.length, 300);
  assert.equal(new Set(fired).size, 300);
  assert.equal((await jobs.due(now, 1000)).length, 0, 'every next_run moved on');
  const rows = await s.store.many<{ n: number }>("SELECT COUNT(*) AS n FROM scheduler_runs WHERE state = 'running'");
  assert.equal(rows[0].n, 300, 'a run row per claimed slot');
});

test('a tick with nothing due takes no write lock (every process ticks)', async () => {
  const s = open();
  const other = open(s.file);
  await new JobStore(s.store).create(fields({ name: 'later', next_run: Date.now() + 3_600_000 }), 'test');
  // Another process holds the write lock: an idle tick must not wait for it (a claim would, up to 5 s).
  const holder = other.store.sqlite();
  holder.exec('BEGIN IMMEDIATE');
  try {
    const started = Date.now();
    assert.equal(await ticker(s, 'a', () => undefined).tick(), 0);
    assert.ok(Date.now() - started < 1_000, `the idle tick waited ${Date.now() - started} ms for the lock`);
  } finally {
    holder.exec('ROLLBACK');
  }
});

test('a slot that comes while a run of the job is going on another node is skipped, saying so', async () => {
  const s = open();
  const jobs = new JobStore(s.store);
  const now = Date.now();
  const j = await jobs.create(fields({ schedule: 'every 1m', kind: 'every', anchor: now - 120_000, next_run: now - 60_000 }), 'test');
  const fired: Claimed[][] = [];
  await ticker(s, 'node-a', (_job, runs) => void fired.push(runs)).tick();
  assert.equal(fired.length, 1);
  // node-a still runs it; node-b's tick reaches the next slot.
  await s.store.run('UPDATE scheduler_jobs SET next_run = ? WHERE id = ?', [now - 1, j.id]);
  await ticker(open(s.file), 'node-b', (_job, runs) => void fired.push(runs)).tick();
  assert.equal(fired.length, 1, 'node-b started a second run');
  const row = (await jobs.get(j.id))!;
  assert.equal(row.last_status, 'skipped');
  assert.match(String(row.last_error), /the previous run was still going/);
});

test('a manual run going never makes a slot skip (only a scheduled run is "the previous run")', async () => {
  const s = open();
  const jobs = new JobStore(s.store);
  const now = Date.now();
  const j = await jobs.create(fields({ next_run: now - 1000 }), 'test');
  await new RunRows(s.store).insertManual(j.id, 'node-b', now + 6000, now);
  const fired: Claimed[][] = [];
  await ticker(s, 'node-a', (_job, runs) => void fired.push(runs)).tick();
  assert.deepEqual(
    fired.map((runs) => runs.map((r) => r.slot)),
    [[now - 1000]],
  );
});

test('a failure pushes the next run back by the backoff; at the limit the job disables itself', async () => {
  const s = open();
  const jobs = new JobStore(s.store);
  const t = s.store;
  const now = Date.now();
  const j = await jobs.create(fields({ next_run: now + 1000 }), 'test');
  await jobs.recordOutcome(t, j.id, { ok: false, text: 'boom', at: now }, { backoffMs: 60_000, maxFailures: 3, oneShot: false });
  let row = (await jobs.get(j.id))!;
  assert.equal(row.next_run, now + 60_000, 'not before the backoff');
  assert.deepEqual([row.consecutive_failures, row.last_status, row.last_error, row.enabled], [1, 'error', 'boom', 1]);
  await jobs.recordOutcome(t, j.id, { ok: true, text: 'fine', at: now }, { backoffMs: 0, maxFailures: 3, oneShot: false });
  assert.equal((await jobs.get(j.id))!.consecutive_failures, 0, 'a success resets the count');
  for (let i = 0; i < 3; i++) await jobs.recordOutcome(t, j.id, { ok: false, text: `e${i}`, at: now }, { backoffMs: 1, maxFailures: 3, oneShot: false });
  row = (await jobs.get(j.id))!;
  assert.deepEqual([row.enabled, row.auto_disabled, row.next_run], [0, 1, null]);
  assert.match(String(row.disabled_reason), /disabled after 3 consecutive failures; the last: e2/);
});

test('a job whose schedule cannot be planned is disabled with the reason; the other due jobs still fire in that tick', async () => {
  const s = open();
  const jobs = new JobStore(s.store);
  const now = Date.now();
  const bad = await jobs.create(fields({ name: 'bad', tz: 'Gone/Zone', next_run: now - 10 }), 'test');
  const good = await jobs.create(fields({ name: 'good', next_run: now - 5 }), 'test');
  const fired: string[] = [];
  await ticker(s, 'node-a', (job) => void fired.push(job.name)).tick();
  assert.deepEqual(fired, ['good']);
  const row = (await jobs.get(bad.id))!;
  assert.equal(row.enabled, 0);
  assert.match(String(row.disabled_reason), /cannot compute its next run: unknown time zone/);
  assert.ok((await jobs.get(good.id))!.next_run! > now);
});
