/**
 * Runs of a dead node: taken over by one live node (one conditional UPDATE each), then run again or marked lost as
 * the job's misfire policy says; a lost slot is recorded on the run and in the job's status, never dropped.
 */
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import pino from 'pino';
import { openTestStore, type TestStore } from '@talon/testing';
import { schedulerConfigSchema, type MisfirePolicy, type SchedulerConfig } from '../config.ts';
import { JobStore, type JobFields, type JobRow } from '../services/jobs.ts';
import { RunRows, type Claimed, type RunRow } from '../services/runs.ts';
import { decide, Takeover, type SlotRun } from '../services/takeover.ts';

const config = Object.fromEntries(Object.entries(schedulerConfigSchema.properties).map(([k, v]) => [k, v.default])) as SchedulerConfig;
const GRACE = config.misfire_grace_secs * 1000;
const opened: TestStore[] = [];
afterEach(() => {
  for (const s of opened.splice(0)) s.close();
});

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
    next_run: null,
    ...over,
  };
}

/** A job whose `slots` were claimed by the node 'dead', and two live nodes' takeovers of it. */
async function setup(over: Partial<JobFields>, slots: number[]) {
  const first = openTestStore([path.join(import.meta.dirname, '..')]);
  opened.push(first);
  const store = first.store;
  const jobs = new JobStore(store);
  const runs = new RunRows(store);
  const job = await jobs.create(fields(over), 'test');
  const claimed = await runs.insert(store, job.id, slots, 'dead', 0, 0);
  const fired: Array<{ node: string; runs: Claimed[] }> = [];
  /** A live node: a connection of its own to the database. */
  const taker = (node: string) => {
    const own = openTestStore([], first.file);
    opened.push(own);
    return new Takeover({
      store: own.store,
      jobs: new JobStore(own.store),
      runs: new RunRows(own.store),
      config: () => config,
      node,
      leaseMs: 6000,
      fire: (_job: JobRow, adopted) => void fired.push({ node, runs: adopted }),
      log: pino({ level: 'silent' }),
    });
  };
  const rows = () => store.many<RunRow>('SELECT * FROM scheduler_runs ORDER BY slot');
  return { store, jobs, job, claimed, fired, taker, rows };
}

test('the misfire policy decides what runs again: all, the latest (fire_once), none (skip); on-time slots always', () => {
  const now = 10 * GRACE;
  const row = (slot: number) => ({ slot }) as SlotRun;
  const late = [row(now - 5 * GRACE), row(now - 3 * GRACE)];
  const slots = (r: SlotRun[]) => r.map((x) => x.slot);
  const by = (policy: MisfirePolicy, held: SlotRun[]) => {
    const d = decide(policy, held, now, GRACE);
    return [slots(d.rerun), slots(d.lost)];
  };
  assert.deepEqual(by('all', late), [slots(late), []]);
  assert.deepEqual(by('fire_once', late), [[now - 3 * GRACE], [now - 5 * GRACE]]);
  assert.deepEqual(by('skip', late), [[], slots(late)]);
  const onTime = [row(now - 1000)];
  assert.deepEqual(by('skip', onTime), [[now - 1000], []]);
});

test("two live nodes take a dead node's run over at once: one wins it and runs it again", async () => {
  const now = Date.now();
  const { taker, fired, rows } = await setup({}, [now - 1000]);
  await Promise.all([taker('node-b').takeOver('dead'), taker('node-c').takeOver('dead')]);
  assert.equal(fired.length, 1, 'both nodes ran it');
  const [run] = await rows();
  assert.equal(run.node, fired[0].node);
  assert.equal(run.state, 'running');
});

test("misfire_policy skip: a dead node's late run is lost, recorded on the run and in the job's status", async () => {
  const slot = Date.now() - 10 * GRACE;
  const { taker, fired, rows, jobs, job } = await setup({ misfire_policy: 'skip', next_run: Date.now() + 3_600_000 }, [slot]);
  await taker('node-b').takeOver('dead');
  assert.equal(fired.length, 0);
  const [run] = await rows();
  assert.equal(run.state, 'lost');
  assert.match(String(run.error), /its node \(dead\) died while it ran, and misfire_policy skip does not run a late slot again/);
  const after = (await jobs.get(job.id))!;
  assert.equal(after.last_status, 'lost');
  assert.match(String(after.last_error), new RegExp(`the run for ${new Date(slot).toISOString()} was lost`));
  assert.equal(after.enabled, 1, 'a cron job keeps its next slots');
});

test("a dead node's manual run is lost, saying so, never run again; the job's schedule is left alone", async () => {
  const { taker, fired, rows, jobs, job, store } = await setup({ next_run: Date.now() + 3_600_000 }, []);
  await new RunRows(store).insertManual(job.id, 'dead', 0, Date.now());
  await taker('node-b').takeOver('dead');
  assert.equal(fired.length, 0);
  const [run] = await rows();
  assert.deepEqual([run.slot, run.state], [null, 'lost']);
  assert.match(String(run.error), /its node \(dead\) died during this manual run, which is not run again/);
  const after = (await jobs.get(job.id))!;
  assert.equal(after.last_status, 'lost');
  assert.match(String(after.last_error), /^a manual run was lost/);
  assert.deepEqual([after.enabled, after.next_run], [1, job.next_run]);
});

test('a one-shot (at) job whose only run was lost is disabled, saying so: the slot is never silently dropped', async () => {
  const slot = Date.now() - 10 * GRACE;
  const { taker, jobs, job } = await setup({ kind: 'at', schedule: `at ${new Date(slot).toISOString()}`, misfire_policy: 'skip' }, [slot]);
  await taker('node-b').takeOver('dead');
  const after = (await jobs.get(job.id))!;
  assert.equal(after.enabled, 0);
  assert.match(String(after.disabled_reason), /one-shot job: the run for .* was lost/);
});

test('at start, the runs of nodes that are not live are taken over; a live node’s are left alone', async () => {
  const now = Date.now();
  const { taker, fired, store, job } = await setup({}, [now - 1000]);
  await new RunRows(store).insert(store, job.id, [now - 500], 'alive', 0, 0);
  await taker('node-b').sweep(new Set(['node-b', 'alive']));
  assert.deepEqual(
    fired.map((f) => f.runs.length),
    [1],
  );
  const held = await store.many<{ node: string }>("SELECT node FROM scheduler_runs WHERE state = 'running' ORDER BY slot");
  assert.deepEqual(
    held.map((r) => r.node),
    ['node-b', 'alive'],
  );
});
