/**
 * Several processes on one database: of the processes that find an agent's scheduler job missing, one creates it; a
 * process that died while creating one leaves a pending claim that a live one takes over (at its death or at start).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { openPostgresTestStore, openTestStore } from '@talon/testing';
import type { AgentRegistry } from '@talon/agents';
import type { JobRequest, JobSummary, SchedulerJobs } from '@talon/scheduler';
import { Dreams, HANDLER } from '../services/dreams.ts';

const AGENT = '11111111-1111-4111-8111-111111111111';
/** TALON_TEST_DB=postgres: the copies share a PostgreSQL database, their statements side by side on its pool. */
const onPostgres = process.env.TALON_TEST_DB === 'postgres';

/** The scheduler's jobs, in memory: what was created, and by whom. */
class FakeJobs implements SchedulerJobs {
  readonly jobs = new Map<string, JobSummary>();
  async create(request: JobRequest): Promise<JobSummary> {
    const job = {
      id: crypto.randomUUID(),
      name: request.name,
      agent_id: request.agentId,
      schedule: request.schedule,
      handler: request.handler ?? null,
      enabled: request.enabled ?? true,
      next_run: null,
      last_run: null,
      run_count: 0,
    };
    this.jobs.set(job.id, job);
    return job;
  }
  async get(id: string): Promise<JobSummary | undefined> {
    return this.jobs.get(id);
  }
  async setEnabled(): Promise<boolean> {
    return true;
  }
  async remove(id: string): Promise<boolean> {
    return this.jobs.delete(id);
  }
  async reschedule(id: string, changes: { schedule?: string; enabled?: boolean }): Promise<JobSummary | undefined> {
    const job = this.jobs.get(id);
    if (job) Object.assign(job, changes);
    return job;
  }
}

async function setup() {
  const dir = path.join(import.meta.dirname, '..');
  const opened = onPostgres ? await openPostgresTestStore([dir]) : openTestStore([dir]);
  const jobs = new FakeJobs();
  const agents = { list: () => [{ id: AGENT, name: 'dreamer' }], get: () => ({ id: AGENT, name: 'dreamer' }) } as unknown as AgentRegistry;
  /** A copy of the module in the process `node`, with `live` the nodes it sees alive. */
  const process = (node: string, live: string[] = [node]) =>
    new Dreams({
      store: opened.store,
      nodes: { id: node, live: async () => live },
      agents: () => agents,
      memory: () => undefined,
      jobs: () => jobs,
      config: () => ({ enabled: true, min_hours: 24 }),
      warn: (err) => assert.fail(err as Error),
      publish: () => undefined,
    });
  const jobId = async () => (await opened.store.one<{ job_id: string | null }>('SELECT job_id FROM auto_dream_agents WHERE agent_id = ?', [AGENT]))?.job_id;
  return { opened, jobs, process, jobId };
}

test('two processes syncing one agent at once create one scheduler job', async () => {
  const { opened, jobs, process, jobId } = await setup();
  try {
    await Promise.all([process('node-a').syncAll(), process('node-b').syncAll(), process('node-a').sync(AGENT)]);
    assert.equal(jobs.jobs.size, 1);
    assert.equal(await jobId(), [...jobs.jobs.keys()][0]);
    // Synced again, the job is found, not made again.
    await process('node-b').syncAll();
    assert.equal(jobs.jobs.size, 1);
  } finally {
    await opened.close();
  }
});

test("a dead process's pending creation is taken over: by onDead's handler, and by the sweep at start", async () => {
  const { opened, jobs, process, jobId } = await setup();
  try {
    // node-dead claimed the creation and died before making the job.
    await opened.store.run('INSERT INTO auto_dream_agents (agent_id, job_id) VALUES (?, ?)', [AGENT, 'pending:node-dead']);
    await process('node-a').syncAll();
    assert.equal(jobs.jobs.size, 0, 'a pending claim is left alone while its node may still make the job');
    await process('node-a').takeOver('node-dead');
    assert.equal(jobs.jobs.size, 1);
    assert.equal(await jobId(), [...jobs.jobs.keys()][0]);

    await opened.store.run('UPDATE auto_dream_agents SET job_id = ?', ['pending:node-gone']);
    await process('node-b', ['node-b', 'node-a']).sweep();
    assert.equal(jobs.jobs.size, 2, 'the sweep takes over the claims of nodes that are not live');
    await opened.store.run('UPDATE auto_dream_agents SET job_id = ?', ['pending:node-a']);
    await process('node-b', ['node-b', 'node-a']).sweep();
    assert.equal(await jobId(), 'pending:node-a', 'a live node keeps its claim');
  } finally {
    await opened.close();
  }
});

test('a job made by a process that died before recording it is removed when it fires, not run; the recorded one runs', async () => {
  const { opened, jobs, process, jobId } = await setup();
  try {
    // node-dead claimed the creation, made the job, and died before writing its id.
    await opened.store.run('INSERT INTO auto_dream_agents (agent_id, job_id) VALUES (?, ?)', [AGENT, 'pending:node-dead']);
    const stray = await jobs.create({ name: 'auto-dream dreamer', agentId: AGENT, schedule: 'every 86400s', prompt: AGENT, handler: HANDLER });
    const live = process('node-a');
    await live.takeOver('node-dead');
    const recorded = await jobId();
    assert.ok(recorded && recorded !== stray.id);
    assert.equal(jobs.jobs.size, 2);

    const fire = (id: string) => live.scheduled({ handler: HANDLER, jobId: id, name: 'auto-dream dreamer', agentId: AGENT, input: AGENT });
    const outcome = await fire(stray.id);
    assert.ok(outcome?.ok && /^removed: /.test(outcome.result), JSON.stringify(outcome));
    assert.deepEqual([...jobs.jobs.keys()], [recorded]);
    // The recorded job runs (here without a memory module, so it says so) and stays.
    assert.deepEqual(await fire(recorded), { ok: false, error: 'the memory module is not running' });
    assert.deepEqual([...jobs.jobs.keys()], [recorded]);
    // While a creation is pending, a job it may be recording is not taken for a stray.
    await opened.store.run('UPDATE auto_dream_agents SET job_id = ?', ['pending:node-a']);
    await fire(recorded);
    assert.equal(jobs.jobs.size, 1);
  } finally {
    await opened.close();
  }
});
