/** What the routes do with jobs: every write goes through normalize() and wakes the loop. */
import { badRequest, notFound, requireUuid } from '@talon/module-sdk';
import type { Dispatcher, RunReport } from './dispatch.ts';
import { normalize, type InputDeps, type JobBody } from './input.ts';
import type { JobRow, JobStore } from './jobs.ts';
import type { RunRow, RunRows } from './runs.ts';
import type { Ticker } from './ticker.ts';

export class Scheduler {
  constructor(
    private readonly jobs: JobStore,
    private readonly input: InputDeps,
    private readonly ticker: Ticker,
    private readonly dispatcher: Dispatcher,
    private readonly runs: RunRows,
  ) {}

  list(agentId?: string): Promise<JobRow[]> {
    return this.jobs.list(agentId);
  }

  /** 400 for a malformed id, 404 for an unknown job. */
  async require(id: string): Promise<JobRow> {
    const job = await this.jobs.get(requireUuid(id, 'job id'));
    if (!job) throw notFound(`job '${id}' not found`);
    return job;
  }

  async create(body: JobBody, via: string, handler?: string): Promise<JobRow> {
    const { fields } = await normalize(this.input, body, undefined, handler);
    const job = await this.jobs.create(fields, via);
    this.ticker.poke();
    return job;
  }

  async update(id: string, body: JobBody): Promise<JobRow> {
    const existing = await this.require(id);
    if (!Object.keys(body).length) throw badRequest('send at least one field to change');
    const { fields, reset } = await normalize(this.input, body, existing);
    const job = await this.jobs.update(existing.id, fields, reset);
    this.ticker.poke();
    return job;
  }

  setEnabled(id: string, enabled: boolean): Promise<JobRow> {
    return this.update(id, { enabled });
  }

  async remove(id: string): Promise<JobRow> {
    const job = await this.require(id);
    await this.jobs.delete(job.id);
    return job;
  }

  /** Runs a job at once and waits for it; its schedule (next run, failure count) stays as it is. */
  async runNow(id: string): Promise<RunReport> {
    return this.dispatcher.runNow(await this.require(id));
  }

  /** A job's runs, scheduled and manual, newest first (whichever node ran them; lost ones too). */
  async history(id: string, limit: number, offset: number): Promise<RunRow[]> {
    const job = await this.require(id);
    return this.runs.list(job.id, limit, offset);
  }
}
