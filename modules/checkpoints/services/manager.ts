import type { Database } from 'better-sqlite3';
import { HttpError } from '@talon/module-sdk';
import type { Logger } from 'pino';
import type { ToolCallInfo } from '@talon/agents';
import { locate } from './shadow.ts';
import { groupTargets, SNAPSHOT_TOOLS, toolPaths } from './targets.ts';
import { TouchedPaths } from './touched.ts';
import { SerialQueues, DeadlineError } from './queue.ts';
import { takeSnapshot } from './snapshot.ts';
import { restoreCheckpoint, type RestoreResult } from './restore.ts';
import { listCheckpoints } from './listing.ts';
import { IndexMirror } from './index-mirror.ts';
import type { ShadowLocation } from './git.ts';
import type { CheckpointEntry, CheckpointMeta } from './message.ts';

export interface CheckpointSettings {
  snapshotTimeoutMs: number;
  maxFileBytes: number;
}

export interface ManagerDeps {
  /** Where the shadow repositories live; asked on first use, since the module's register() does no I/O. */
  root: () => string;
  db: Database;
  log: Logger;
  settings: () => CheckpointSettings;
  /** The paths an apply_patch text names (the tools module's parser; none when it is not loaded). */
  patchPaths: (patch: string) => string[];
}

/** A restore is a client request, not on a tool's path: a generous fixed bound. */
const RESTORE_DEADLINE_MS = 60_000;

/** Snapshots, restores and listings of shadow repositories under one checkpoints root. */
export class CheckpointManager {
  private readonly touched: TouchedPaths;
  private readonly queues = new SerialQueues();
  private readonly index = new IndexMirror();
  private readonly log: Logger;

  constructor(private readonly deps: ManagerDeps) {
    this.touched = new TouchedPaths(deps.db);
    this.log = deps.log;
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
    this.touched.record(workDir, paths);
    const { snapshotTimeoutMs, maxFileBytes } = this.deps.settings();
    const location = locate(this.deps.root(), workDir);
    return this.queue(location, snapshotTimeoutMs, (signal) =>
      takeSnapshot(location, this.touched.list(workDir), meta, { maxFileBytes, log: this.log, signal, index: this.index }),
    );
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
        this.index.forget(location.gitDir);
        throw err;
      }
    });
  }

  list(workDir: string, page: { limit: number; offset: number }): Promise<CheckpointEntry[]> {
    return listCheckpoints(locate(this.deps.root(), workDir), page);
  }

  /** Module stop: aborts queued and running jobs and waits for them. */
  close(): Promise<void> {
    return this.queues.close();
  }
}
