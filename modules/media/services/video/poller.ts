/**
 * The background poller of video tasks: it polls whether or not anyone asks. Each pass claims the tasks that are due
 * (their next poll or their deadline has come) and that no live process holds, a few at a time, and polls each with
 * its provider's driver; the outcome is written back with the next poll time (backoff: first, then ×factor up to the
 * longest wait; a 429 waits at least its Retry-After) and the claim released. The rows are the whole state, so a
 * restart, another process or the successor of a hot reload picks up where this one stopped.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { VideoPoll } from '@talon/media';
import { isMediaError } from '../kit/errors.ts';
import type { VideoConfig, VideoDeps } from './deps.ts';
import { errorText, type TaskEnds } from './ends.ts';
import type { VideoTaskRow, VideoTaskStore } from './store.ts';

/** Tasks one process polls at once; of their finished videos one at a time is downloaded and stored (gate.ts). */
const CONCURRENCY = 4;
/** How long a stopping poller waits for the polls in flight (aborted by the stop) before giving their claims back. */
const DRAIN_MS = 3_000;

/** The wait before the poll that follows `polls` polls: first × factor^polls, capped. */
export function pollDelayMs(config: VideoConfig, polls: number): number {
  const first = config.video_poll_first_secs * 1000;
  return Math.round(Math.min(first * config.video_poll_factor ** polls, config.video_poll_max_secs * 1000));
}

export class VideoPoller {
  private readonly inflight = new Map<string, Promise<void>>();

  constructor(
    private readonly deps: VideoDeps,
    private readonly tasks: VideoTaskStore,
    private readonly ends: TaskEnds,
  ) {}

  /** Runs until the signal aborts (the module copy stops), then gives back the claims of polls cut short. */
  async run(signal: AbortSignal): Promise<void> {
    const { log, nodes } = this.deps;
    let renewedAt = Date.now();
    while (!signal.aborted) {
      await this.pass(signal).catch((err: unknown) => log.warn({ err: errorText(err) }, 'a video poll pass failed; the next one tries again'));
      if (this.inflight.size > 0 && Date.now() - renewedAt >= nodes.leaseMs / 3) {
        renewedAt = Date.now();
        await this.tasks
          .renew(nodes.id, renewedAt + nodes.leaseMs)
          .catch((err: unknown) => log.warn({ err: errorText(err) }, 'renewing video task claims failed'));
      }
      await sleep(this.tickMs(), undefined, { signal }).catch(() => undefined);
    }
    await Promise.race([Promise.allSettled(this.inflight.values()), sleep(DRAIN_MS)]);
    await this.tasks.releaseNode(nodes.id).catch((err: unknown) => log.warn({ err: errorText(err) }, 'giving back video task claims failed'));
  }

  /** Gives back the claims of a process found dead, so its tasks are polled now rather than when their leases end. */
  async takeOver(node: string): Promise<void> {
    const released = await this.tasks.releaseNode(node);
    if (released > 0) this.deps.log.info({ node, tasks: released }, 'took over the video tasks of a process that is gone');
  }

  /**
   * The loop's period: short enough to poll a task soon after it is due (at most a second late, or the first wait
   * when that is shorter) and to renew the claims in flight well within a lease.
   */
  private tickMs(): number {
    const tick = Math.min(1000, Math.max(10, this.deps.config().video_poll_first_secs * 1000));
    return this.inflight.size > 0 ? Math.min(tick, Math.max(10, this.deps.nodes.leaseMs / 3)) : tick;
  }

  private async pass(signal: AbortSignal): Promise<void> {
    const free = CONCURRENCY - this.inflight.size;
    const { nodes } = this.deps;
    // A node that no longer beats is gone to the others, who take its claims over: it takes none again.
    if (free <= 0 || !nodes.active) return;
    for (const row of await this.tasks.claimDue(nodes.id, Date.now(), nodes.leaseMs, free)) {
      const work = this.deps.gate
        .poll(signal, () => this.pollTask(row, signal))
        .catch((err: unknown) => this.retry(row, err, signal))
        .catch((err: unknown) => this.deps.log.warn({ task_id: row.task_id, err: errorText(err) }, 'a video poll could not be recorded'))
        .finally(() => this.inflight.delete(row.task_id));
      this.inflight.set(row.task_id, work);
    }
  }

  private async pollTask(row: VideoTaskRow, signal: AbortSignal): Promise<void> {
    if (Date.now() >= row.deadline_at) return this.ends.timeout(row);
    const driver = this.deps.driver(row.provider);
    if (!driver?.pollVideo) throw new Error(`the media provider '${row.provider}' is not running (or cannot poll video tasks)`);
    const timeout = AbortSignal.timeout(this.deps.config().video_timeout_secs * 1000);
    const poll: VideoPoll = await driver.pollVideo(row.provider_task_id, AbortSignal.any([signal, timeout]));
    if (poll.state === 'completed') {
      // Taken already when the video came through kit.download; a driver that had it another way takes it here.
      await this.deps.gate.enter();
      return this.ends.complete(row, poll);
    }
    if (poll.state === 'failed') {
      await this.ends.fail(row, poll.error || 'the provider reported a failure');
      return;
    }
    return this.progress(row, poll.progress);
  }

  /** Still processing: the next poll after the backoff; a change of progress is announced. */
  private async progress(row: VideoTaskRow, progress: number | undefined): Promise<void> {
    const now = Date.now();
    const polls = row.polls + 1;
    const outcome = { next_poll_at: now + pollDelayMs(this.deps.config(), polls), polls, attempts: 0, progress: progress ?? row.progress, error: null };
    const kept = await this.tasks.settle(row.task_id, this.deps.nodes.id, outcome, now);
    if (kept && progress !== undefined && progress !== row.progress) {
      this.deps.events.publish('media.video_task', { task_id: row.task_id, provider: row.provider, status: 'processing', progress });
    }
  }

  /** A poll that failed (network, outage, 429, the driver missing) counts an attempt and waits longer; the deadline ends it. */
  private async retry(row: VideoTaskRow, err: unknown, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return; // stopping: run() gives the claim back without counting an attempt
    const now = Date.now();
    const polls = row.polls + 1;
    const attempts = row.attempts + 1;
    const retryAfter = isMediaError(err) ? err.retryAfterMs : undefined;
    const wait = Math.max(pollDelayMs(this.deps.config(), polls), retryAfter ?? 0);
    const error = errorText(err);
    this.deps.log.warn({ task_id: row.task_id, provider: row.provider, attempts, retry_in_ms: wait, err: error }, 'a video poll failed');
    await this.tasks.settle(row.task_id, this.deps.nodes.id, { next_poll_at: now + wait, polls, attempts, progress: row.progress, error }, now);
  }
}
