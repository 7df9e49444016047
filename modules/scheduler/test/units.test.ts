/** The scheduler's parts on a real SQLite file: times, claims by two nodes, backoff, a job that cannot be planned. */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import pino from 'pino';
import { schedulerConfigSchema, type SchedulerConfig } from '../config.ts';
import { JobStore, type JobFields } from '../services/jobs.ts';
import { Schedules } from '../services/spec.ts';
import { Ticker } from '../services/ticker.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'talon-sched-units-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const config = Object.fromEntries(Object.entries(schedulerConfigSchema.properties).map(([k, v]) => [k, v.default])) as SchedulerConfig;
const log = pino({ level: 'silent' });

function openDb(name: string): Database.Database {
  const db = new Database(path.join(dir, name));
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  return db;
}

function migrate(db: Database.Database): void {
  const dir = path.join(import.meta.dirname, '../migrations');
  for (const file of readdirSync(dir).sort()) db.exec(readFileSync(path.join(dir, file), 'utf8'));
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

test('two nodes on one database: every due job is claimed and fired exactly once', async () => {
  const first = openDb('nodes.db');
  migrate(first);
  const second = openDb('nodes.db');
  const now = Date.now();
  const [a, b] = [new JobStore(first), new JobStore(second)];
  for (let i = 0; i < 300; i++) a.create(fields({ name: `j${i}`, next_run: now - 1000 }), 'test');
  // Both nodes see the same due jobs before either claims (the race), then both try each claim.
  const seenA = a.due(now, 1000);
  const seenB = b.due(now, 1000);
  assert.equal(seenA.length, 300);
  let won = 0;
  for (let i = 0; i < 300; i++) {
    const next = now + 3_600_000;
    won += Number(a.claim(seenA[i].id, seenA[i].next_run!, next)) + Number(b.claim(seenB[i].id, seenB[i].next_run!, next));
  }
  assert.equal(won, 300, 'one winner per job');
  // The tickers of both nodes, on fresh due jobs: each fires once between them.
  for (let i = 0; i < 300; i++) a.create(fields({ name: `k${i}`, next_run: now - 500 }), 'test');
  const fired: string[] = [];
  const node = (jobs: JobStore) =>
    new Ticker({ jobs, schedules: new Schedules(), config: () => config, fire: (job) => void fired.push(job.id), log, setTimer: setTimeout });
  await Promise.all([node(a).tick(), node(b).tick()]);
  assert.equal(fired.length, 300);
  assert.equal(new Set(fired).size, 300);
  assert.equal(b.due(now, 1000).length, 0, 'every next_run moved on');
  first.close();
  second.close();
});

test('a failure pushes the next run back by the backoff; at the limit the job disables itself', () => {
  const db = openDb('backoff.db');
  migrate(db);
  const jobs = new JobStore(db);
  const now = Date.now();
  const j = jobs.create(fields({ next_run: now + 1000 }), 'test');
  jobs.recordOutcome(j.id, { ok: false, text: 'boom', at: now }, { backoffMs: 60_000, maxFailures: 3, oneShot: false });
  let row = jobs.get(j.id)!;
  assert.equal(row.next_run, now + 60_000, 'not before the backoff');
  assert.deepEqual([row.consecutive_failures, row.last_status, row.last_error, row.enabled], [1, 'error', 'boom', 1]);
  jobs.recordOutcome(j.id, { ok: true, text: 'fine', at: now }, { backoffMs: 0, maxFailures: 3, oneShot: false });
  assert.equal(jobs.get(j.id)!.consecutive_failures, 0, 'a success resets the count');
  for (let i = 0; i < 3; i++) jobs.recordOutcome(j.id, { ok: false, text: `e${i}`, at: now }, { backoffMs: 1, maxFailures: 3, oneShot: false });
  row = jobs.get(j.id)!;
  assert.deepEqual([row.enabled, row.auto_disabled, row.next_run], [0, 1, null]);
  assert.match(String(row.disabled_reason), /disabled after 3 consecutive failures; the last: e2/);
  db.close();
});

test('a job whose schedule cannot be planned is disabled with the reason; the other due jobs still fire in that tick', async () => {
  const db = openDb('broken.db');
  migrate(db);
  const jobs = new JobStore(db);
  const now = Date.now();
  const bad = jobs.create(fields({ name: 'bad', tz: 'Gone/Zone', next_run: now - 10 }), 'test');
  const good = jobs.create(fields({ name: 'good', next_run: now - 5 }), 'test');
  const fired: string[] = [];
  const ticker = new Ticker({ jobs, schedules: new Schedules(), config: () => config, fire: (job) => void fired.push(job.name), log, setTimer: setTimeout });
  await ticker.tick();
  assert.deepEqual(fired, ['good']);
  const row = jobs.get(bad.id)!;
  assert.equal(row.enabled, 0);
  assert.match(String(row.disabled_reason), /cannot compute its next run: unknown time zone/);
  assert.ok(jobs.get(good.id)!.next_run! > now);
  db.close();
});
