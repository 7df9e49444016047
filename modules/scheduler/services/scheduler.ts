/** What the routes do with jobs: every write goes through normalize() and wakes the loop. */
import { badRequest, notFound, requireUuid } from '@talon/module-sdk';
import type { Dispatcher, RunReport } from './dispatch.ts';
import { normalize, type InputDeps, type JobBody } from './input.ts';
import type { JobRow, JobStore } from './jobs.ts';
import type { Ticker } from './ticker.ts';

export class Scheduler {
  constructor(
    private readonly jobs: JobStore,
    private readonly input: InputDeps,
    private readonly ticker: Ticker,
    private readonly dispatcher: Dispatcher,
  ) {}

  list(agentId?: string): JobRow[] {
    return this.jobs.list(agentId);
  }

  /** 400 for a malformed id, 404 for an unknown job. */
  require(id: string): JobRow {
    const job = this.jobs.get(requireUuid(id, 'job id'));
    if (!job) throw notFound(`job '${id}' not found`);
    return job;
  }

  create(body: JobBody, via: string, handler?: string): JobRow {
    const { fields } = normalize(this.input, body, undefined, handler);
    const job = this.jobs.create(fields, via);
    this.ticker.poke();
    return job;
  }

  update(id: string, body: JobBody): JobRow {
    const existing = this.require(id);
    if (!Object.keys(body).length) throw badRequest('send at least one field to change');
    const { fields, reset } = normalize(this.input, body, existing);
    const job = this.jobs.update(existing.id, fields, reset);
    this.ticker.poke();
    return job;
  }

  setEnabled(id: string, enabled: boolean): JobRow {
    return this.update(id, { enabled });
  }

  remove(id: string): JobRow {
    const job = this.require(id);
    this.jobs.delete(job.id);
    return job;
  }

  /** Runs a job at once and waits for it; its schedule (next run, failure count) stays as it is. */
  runNow(id: string): Promise<RunReport> {
    return this.dispatcher.run(this.require(id), false);
  }
}
