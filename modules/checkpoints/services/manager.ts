import { readdirSync } from 'node:fs';
import path from 'node:path';
import { HttpError, type Store } from '@talon/module-sdk';
import type { Logger } from 'pino';
import type { ToolCallInfo } from '@talon/agents';
import { locate, repoExists } from './shadow.ts';
import { groupTargets, SNAPSHOT_TOOLS, toolPaths } from './targets.ts';
import { TouchedPaths } from './touched.ts';
import { SerialQueues, DeadlineError } from './queue.ts';
import { takeSnapshot } from './snapshot.ts';
import { restoreCheckpoint, type RestoreResult } from './restore.ts';
import { listCheckpoints } from './listing.ts';
import { checkpointDetail, type CheckpointDetail } from './detail.ts';
import { IndexMirror } from './index-mirror.ts';
import { applyRetention, type RetentionPolicy } from './retention.ts';
import type { ShadowLocation } from './git.ts';
import type { CheckpointEntry, CheckpointMeta } from './message.ts';

export interface CheckpointSettings {
  snapshotTimeoutMs: number;
  maxFileBytes: number;
  retention: RetentionPolicy;
}

export interface ManagerDeps {
  /** Where the shadow repositories live; asked on first use, since the module's register() does no I/O. */
  root: () => string;
  store: Store;
  log: Logger;
  settings: () => CheckpointSettings;
  /** The paths an apply_patch text names (the tools module's parser; none when it is not loaded). */
  patchPaths: (patch: string) => string[];
  /** Tells the other processes on the home that a shadow index changed (ctx.changes); none in a lone test. */
  indexChanged?: (gitDir: string) => Promise<void>;
}

/** A restore is a client request, not on a tool's path: a generous fixed bound (retention work has the same). */
const RESTORE_DEADLINE_MS = 60_000;

/** A repository's retention is checked again after this long, whatever it got meanwhile. */
const RETENTION_RECHECK_MS = 3_600_000;

/** Snapshots, restores and listings of shadow repositories under one checkpoints root. */
export class CheckpointManager {
  private readonly touched: TouchedPaths;
  private readonly queues = new SerialQueues();
  private readonly index = new IndexMirror((gitDir) => this.noteIndex(gitDir));
  /** Per repository: commits since its retention was last checked, and when that was. */
  private readonly retained = new Map<string, { commits: number; at: number }>();
  private readonly log: Logger;

  constructor(private readonly deps: ManagerDeps) {
    this.touched = new TouchedPaths(deps.store);
    this.log = deps.log;
  }

  /** Another process changed this shadow index ('': any of them): the mirror is reloaded on next use. */
  forgetIndex(gitDir: string): void {
    this.index.forget(gitDir);
  }

  private noteIndex(gitDir: string): void {
    this.deps.indexChanged?.(gitDir).catch((err: unknown) => this.log.warn({ err, gitDir }, "could not tell the other processes of a shadow index's change"));
  }

  /**
   * The beforeToolCall tap. Never throws and never waits longer than the
   * snapshot deadline: a failed or slow snapshot is a warning and the tool
   * goes ahead (spec "Errors" rule 6); its paths stay recorded, so the next
   * snapshot of the directory picks them up.
   */
  async beforeToolCall(call: ToolCallInfo): Promise<void> {
    // No workspace, no snapshot (the file tools refuse to run without one).
    if (!SNAPSHOT_TOOLS.has(call.tool) || !call.workspace) return;
    try {
      const groups = groupTargets(call.workspace, toolPaths(call.tool, call.input, this.deps.patchPaths));
      await Promise.all(
        groups.map(({ workDir, paths }) =>
          this.snapshot(workDir, paths, { tool: call.tool, agentId: call.agent.id, sessionId: call.sessionId, paths }).catch((err: unknown) => {
            const timedOut = err instanceof DeadlineError;
            this.log.warn(
              { err: timedOut ? undefined : err, workDir, tool: call.tool, agentId: call.agent.id },
              timedOut ? `checkpoint snapshot timed out (git killed); the tool proceeds` : 'checkpoint snapshot failed; the tool proceeds',
            );
          }),
        ),
      );
    } catch (err) {
      this.log.warn({ err, tool: call.tool }, 'checkpoint snapshot failed; the tool proceeds');
    }
  }

  /**
   * Records the paths as touched, then commits the current state of every
   * touched path of the directory (queued behind other work on the same
   * shadow repository, bounded by snapshot_timeout_ms).
   */
  async snapshot(workDir: string, paths: readonly string[], meta: CheckpointMeta): Promise<string | null> {
    await this.touched.record(workDir, paths);
    const { snapshotTimeoutMs, maxFileBytes } = this.deps.settings();
    const location = locate(this.deps.root(), workDir);
    // The list is read when the job runs, after the jobs queued before it: it holds every path recorded by then.
    const commit = await this.queue(location, snapshotTimeoutMs, async (signal) =>
      takeSnapshot(location, await this.touched.list(workDir), meta, { maxFileBytes, log: this.log, signal, index: this.index }),
    );
    if (commit) this.afterCommit(location);
    return commit;
  }

  /**
   * Queues a retention pass behind the snapshot (the tool does not wait for it) on a repository's first commit in
   * this process, every tenth of max_checkpoints commits after, or an hour after the last pass.
   */
  private afterCommit(location: ShadowLocation): void {
    const policy = this.deps.settings().retention;
    if (!policy.maxCount && !policy.maxAgeDays) return;
    const seen = this.retained.get(location.gitDir);
    const every = Math.max(1, Math.ceil(policy.maxCount / 10));
    if (seen && ++seen.commits < every && Date.now() - seen.at < RETENTION_RECHECK_MS) return;
    this.retained.set(location.gitDir, { commits: 0, at: Date.now() });
    void this.retain(location, policy);
  }

  private async retain(location: ShadowLocation, policy: RetentionPolicy, now = Date.now()): Promise<number> {
    try {
      const dropped = await this.queue(location, RESTORE_DEADLINE_MS, (signal) => applyRetention(location, policy, now, signal));
      if (dropped) this.log.info({ workDir: location.workDir, dropped }, 'old checkpoints dropped (retention)');
      return dropped;
    } catch (err) {
      this.log.warn({ err, gitDir: location.gitDir }, 'checkpoint retention failed; it is tried again later');
      return 0;
    }
  }

  /** Applies the retention policy to every shadow repository (also those no snapshot reaches any more). */
  async sweep(now = Date.now()): Promise<number> {
    const policy = this.deps.settings().retention;
    if (!policy.maxCount && !policy.maxAgeDays) return 0;
    const root = this.deps.root();
    let names: string[];
    try {
      names = readdirSync(root).filter((name) => /^[0-9a-f]{16}$/.test(name));
    } catch {
      return 0; // no checkpoints yet
    }
    let dropped = 0;
    // The working directory is not needed to drop history: the repository stands in for it.
    for (const name of names)
      dropped += await this.retain({ gitDir: path.join(root, name), workDir: path.join(root, name), emptyDir: path.join(root, '.empty') }, policy, now);
    return dropped;
  }

  /** Restores a commit into the working directory (throws HttpError 404/400 for client mistakes, 503 past the deadline). */
  async restore(workDir: string, commit: string): Promise<RestoreResult> {
    const location = locate(this.deps.root(), workDir);
    const { maxFileBytes } = this.deps.settings();
    try {
      return await this.queue(location, RESTORE_DEADLINE_MS, (signal) =>
        restoreCheckpoint(location, commit, { maxFileBytes, log: this.log, signal, index: this.index }),
      );
    } catch (err) {
      if (err instanceof DeadlineError)
        throw new HttpError(503, `restore of '${workDir}' took longer than ${RESTORE_DEADLINE_MS / 1000} s and was stopped; try again`);
      throw err;
    }
  }

  /** Runs a job on the repository's serial queue; after any failure the in-memory index mirror is reloaded on next use. */
  private queue<T>(location: ShadowLocation, deadlineMs: number, job: (signal: AbortSignal) => Promise<T>): Promise<T> {
    return this.queues.run(location.gitDir, deadlineMs, async (signal) => {
      try {
        return await job(signal);
      } catch (err) {
        // The failed job may have changed the index before failing: here and in the other processes, reload it.
        this.index.forget(location.gitDir);
        this.noteIndex(location.gitDir);
        throw err;
      }
    });
  }

  list(workDir: string, page: { limit: number; offset: number }): Promise<CheckpointEntry[]> {
    return listCheckpoints(locate(this.deps.root(), workDir), page);
  }

  hasRepository(workDir: string): boolean {
    return repoExists(locate(this.deps.root(), workDir));
  }

  detail(workDir: string, commit: string): Promise<CheckpointDetail> {
    return checkpointDetail(locate(this.deps.root(), workDir), commit);
  }

  /** Module stop: aborts queued and running jobs and waits for them. */
  close(): Promise<void> {
    return this.queues.close();
  }
}
