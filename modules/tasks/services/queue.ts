/**
 * The queue: background agent turns (schedules, triggers, workflow steps, task wake-ups) are rows of tasks_queue,
 * committed before they run. Every process claims the rows it can run, oldest first, while the lane's running rows
 * (on every process) are under the cap; the process that ran a row records its outcome, and the caller is resolved
 * here when it ran here, else when the row ends (woken by the change feed, with a bounded poll as a fallback).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { conflict, HttpError, type ChangeFeed, type NodeAccess, type Store } from '@talon/module-sdk';
import type { TurnResult } from '@talon/agents';
import type { BackgroundTurn, LaneStatus, TaskQueue } from '../api.ts';
import type { TasksConfig } from '../config.ts';
import { QueueRows, type Claimed, type NewRow, type QueueRow, type Recorded } from './rows.ts';
import { payloadOf, runTurn, type TurnDeps, type TurnPayload } from './turn.ts';

const MINUTE = 60_000;
const DEFAULT_CAP = 4;
/** The change-feed topic of the queue's rows: a row was queued, ended or cancelled. */
export const TOPIC = 'queue';
/** Ended rows are kept this long (an idempotency key holds as long). */
const KEEP_MS = 24 * 3600_000;

export interface QueueDeps extends TurnDeps {
  store: Store;
  nodes: Pick<NodeAccess, 'id' | 'live' | 'active'>;
  changes: Pick<ChangeFeed, 'note'>;
  config: () => TasksConfig;
  log: Logger;
  /** When this process started: lanes count the rows ended since. */
  startedAt: number;
}

interface Waiter {
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export class Queue implements TaskQueue {
  readonly rows: QueueRows;
  /** This module copy: the local jobs it queued can run only here. */
  private readonly holder = randomUUID();
  /** Callers waiting for rows, by row id. */
  private readonly waiters = new Map<string, Waiter[]>();
  /** The functions of local jobs this copy queued and has not run yet. */
  private readonly jobs = new Map<string, () => Promise<unknown>>();
  /** Rows this copy runs now, with what stops each. */
  private readonly running = new Map<string, AbortController>();
  private pumping = false;
  private pumpAgain = false;
  private refreshing?: Promise<void>;
  private refreshAgain = false;
  /** Set when the copy stops: it claims only the local jobs it holds, until its callers have their answers. */
  private retired = false;

  constructor(private readonly deps: QueueDeps) {
    this.rows = new QueueRows(deps.store);
  }

  runTurn(turn: BackgroundTurn): Promise<TurnResult> {
    if (turn.signal?.aborted) return Promise.reject(conflict('stopped before the turn started'));
    const row = { lane: turn.lane, kind: 'turn' as const, key: turn.key, payload: JSON.stringify(payloadOf(turn)) };
    return this.submit(row, turn.signal) as Promise<TurnResult>;
  }

  run<T>(lane: string, job: () => Promise<T>): Promise<T> {
    const id = randomUUID();
    this.jobs.set(id, job);
    return this.submit({ id, lane, kind: 'local', payload: '{}', holder: this.holder }).finally(() => this.jobs.delete(id)) as Promise<T>;
  }

  async lanes(): Promise<LaneStatus[]> {
    const { lanes } = await this.rows.counts(this.deps.startedAt, Date.now() - MINUTE);
    const names = [...new Set([...Object.keys(this.deps.config().lanes), ...[...lanes.keys()].sort()])];
    return names.map((lane) => {
      const c = lanes.get(lane) ?? { queued: 0, running: 0, completed: 0 };
      return { lane, active: c.running, queued: c.queued, capacity: this.cap(lane), completed: c.completed };
    });
  }

  /** Rows that ended in the last minute, on every process. */
  async throughputPerMinute(): Promise<number> {
    return (await this.rows.counts(this.deps.startedAt, Date.now() - MINUTE)).recent;
  }

  /** At start: the rows of nodes that are gone are taken over, then whatever waits is claimed. */
  async start(): Promise<void> {
    const live = new Set(await this.deps.nodes.live());
    for (const node of await this.rows.holders()) if (!live.has(node)) await this.takeOver(node);
    this.pump();
  }

  /**
   * A node died (or stopped): its running turns go back to the queue and its local jobs fail, in one conditional
   * UPDATE that one live node wins; then the freed rows are claimed.
   */
  async takeOver(node: string): Promise<void> {
    const moved = await this.deps.store.tx(async (t) => {
      const n = await this.rows.takeOver(node, Date.now(), t);
      if (n) await this.deps.changes.note(TOPIC, '', t);
      return n;
    });
    if (moved) this.deps.log.info({ node, rows: moved }, 'queue rows of a gone process taken over (running turns queued again, its jobs failed)');
    await this.refresh();
  }

  /**
   * Another process changed rows (or the poll came): answer the callers whose rows ended elsewhere, stop the turns
   * cancelled elsewhere, and claim what waits. One at a time; a request meanwhile runs once more after.
   */
  refresh(): Promise<void> {
    if (this.refreshing) {
      this.refreshAgain = true;
      return this.refreshing;
    }
    this.refreshing = this.refreshOnce()
      .catch((err: unknown) => this.deps.log.warn({ err }, 'reading the queue failed; the next poll tries again'))
      .finally(() => {
        this.refreshing = undefined;
        if (this.refreshAgain) {
          this.refreshAgain = false;
          void this.refresh();
        }
      });
    return this.refreshing;
  }

  /** The fallback poll: a refresh when someone waits or something runs here, else only a look for waiting rows. */
  async poll(): Promise<void> {
    if (this.waiters.size || this.running.size) await this.refresh();
    else this.pump();
  }

  /** Ended rows older than a day go. */
  async prune(): Promise<void> {
    await this.rows.prune(Date.now() - KEEP_MS);
  }

  /** The copy stops: it no longer claims turns (its successor does), only the local jobs it holds, for its callers. */
  retire(): void {
    this.retired = true;
  }

  /** One look for a retired copy's callers (see retire); rejects when the store is gone. */
  drainOnce(): Promise<void> {
    return this.refreshOnce();
  }

  /** Answers every caller still waiting with `err` (the store closed under a retired copy). */
  abandon(err: Error): void {
    for (const id of [...this.waiters.keys()]) this.answer(id, { ok: false, error: err });
  }

  /** Whether callers still wait on this copy (a retired copy keeps polling for them until none do). */
  get busy(): boolean {
    return this.waiters.size > 0 || this.running.size > 0;
  }

  private cap(lane: string): number {
    return (this.deps.config().lanes as Record<string, number | undefined>)[lane] ?? DEFAULT_CAP;
  }

  /** Commits the row (and a change note), then waits for its outcome. */
  private async submit(row: Omit<NewRow, 'id' | 'owner'> & { id?: string }, signal?: AbortSignal): Promise<unknown> {
    const { store, changes, nodes } = this.deps;
    const at = Date.now();
    const { id, added } = await store.tx(async (t) => {
      const inserted = await this.rows.add({ ...row, id: row.id ?? randomUUID(), owner: nodes.id }, at, t);
      if (inserted.added) await changes.note(TOPIC, inserted.id, t);
      return inserted;
    });
    const answer = new Promise((resolve, reject) => {
      const list = this.waiters.get(id) ?? [];
      list.push({ resolve, reject });
      this.waiters.set(id, list);
    });
    if (signal) {
      const cancel = () => void this.cancel(id).catch((err: unknown) => this.deps.log.warn({ err, row: id }, 'cancelling a queued turn failed'));
      signal.addEventListener('abort', cancel, { once: true });
      void answer.then(
        () => signal.removeEventListener('abort', cancel),
        () => signal.removeEventListener('abort', cancel),
      );
    }
    // A key already taken: that row may have ended before anyone here waited for it.
    if (!added) await this.settle([id]);
    this.pump();
    return answer;
  }

  /** The caller's signal: the row is cancelled; a turn running here stops (and rejects), one elsewhere is told to. */
  private async cancel(id: string): Promise<void> {
    const cancelled = await this.deps.store.tx(async (t) => {
      const row = await this.rows.cancel(id, Date.now(), t);
      if (row) await this.deps.changes.note(TOPIC, id, t);
      return row;
    });
    if (!cancelled) return;
    const here = this.running.get(id);
    if (here) here.abort(new Error('cancelled'));
    else this.answer(id, { ok: false, error: conflict(cancelled.node ? 'the turn was stopped before it finished' : 'stopped before the turn started') });
  }

  /** Claims waiting rows while lanes have room; one pass at a time, a request meanwhile runs one more. */
  private pump(): void {
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    void this.claimAll()
      .catch((err: unknown) => this.deps.log.warn({ err }, 'claiming queued turns failed; the next poll tries again'))
      .finally(() => {
        this.pumping = false;
        if (this.pumpAgain) {
          this.pumpAgain = false;
          this.pump();
        }
      });
  }

  private async claimAll(): Promise<void> {
    const { nodes } = this.deps;
    // A node that no longer beats is gone to the others, who take its rows back to the queue: it claims none again.
    if (!nodes.active) return;
    for (const lane of await this.rows.waitingLanes(this.holder, this.retired)) {
      for (;;) {
        const row = await this.rows.claim(lane, this.cap(lane), nodes.id, this.holder, this.retired, Date.now());
        if (!row) break;
        void this.execute(row);
      }
    }
  }

  /** Runs a claimed row, records its outcome (unless it was cancelled or taken over meanwhile), answers callers here. */
  private async execute(row: Claimed): Promise<void> {
    const controller = new AbortController();
    this.running.set(row.id, controller);
    let outcome: Outcome;
    try {
      outcome = { ok: true, value: await this.perform(row, controller.signal) };
    } catch (error) {
      outcome = { ok: false, error };
    }
    let answerNow = true;
    try {
      answerNow = await this.deps.store.tx(async (t) => {
        if (await this.rows.finish(row.id, this.deps.nodes.id, recorded(outcome), Date.now(), t)) {
          await this.deps.changes.note(TOPIC, row.id, t);
          return true;
        }
        // No longer this node's row. Cancelled: its callers hear how the run stopped here. Taken over (this node was
        // found gone and another runs the turn again): the run cut off here is not the turn's outcome; its callers are
        // answered from the row once it ends on the other node.
        return (await this.rows.stateOf(row.id, t)) === 'cancelled';
      });
    } catch (err) {
      this.deps.log.error({ err, row: row.id, lane: row.lane }, 'could not record the outcome of a queued turn');
    }
    // Answered before the row leaves `running`, so a refresh never answers it a second time from the store.
    if (answerNow) this.answer(row.id, outcome);
    this.running.delete(row.id);
    this.pump();
  }

  private perform(row: Claimed, signal: AbortSignal): Promise<unknown> {
    if (row.kind === 'turn') return runTurn(this.deps, JSON.parse(row.payload) as TurnPayload, signal);
    const job = this.jobs.get(row.id);
    if (!job) return Promise.reject(new Error(`queued job ${row.id} is not held by this module copy`));
    return job();
  }

  private async refreshOnce(): Promise<void> {
    await this.settle([...this.waiters.keys()].filter((id) => !this.running.has(id)));
    for (const id of await this.rows.lost([...this.running.keys()], this.deps.nodes.id)) this.running.get(id)?.abort(new Error('cancelled'));
    this.pump();
  }

  /** Answers the callers of the rows (of `ids`) that have ended, from what the store recorded. */
  private async settle(ids: string[]): Promise<void> {
    for (const row of await this.rows.ended(ids)) this.answer(row.id, fromRow(row));
  }

  private answer(id: string, outcome: Outcome): void {
    const list = this.waiters.get(id);
    if (!list) return;
    this.waiters.delete(id);
    for (const w of list) {
      if (outcome.ok) w.resolve(outcome.value);
      else w.reject(outcome.error);
    }
  }
}

/** What the store keeps of an outcome: the result as JSON (when it has one), or the error with its HTTP status. */
function recorded(outcome: Outcome): Recorded {
  if (outcome.ok) return { state: 'done', result: toJson(outcome.value) };
  const err = outcome.error;
  return { state: 'failed', error: err instanceof Error ? err.message : String(err), status: err instanceof HttpError ? err.statusCode : null };
}

function toJson(value: unknown): string | null {
  try {
    return JSON.stringify(value) ?? null;
  } catch {
    // A local job's result that is not JSON (it reaches its caller in memory anyway).
    return null;
  }
}

function fromRow(row: QueueRow): Outcome {
  if (row.state === 'done') return { ok: true, value: row.result === null ? undefined : JSON.parse(row.result) };
  if (row.state === 'cancelled') return { ok: false, error: conflict('the turn was cancelled before it answered') };
  const message = row.error ?? 'failed';
  return { ok: false, error: row.error_status === null ? new Error(message) : new HttpError(row.error_status, message) };
}
