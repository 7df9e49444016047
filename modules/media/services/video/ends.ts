/**
 * How a video task ends: completed (the video stored as a file this service owns, measured where the provider said
 * nothing), failed (the provider's reason, a refused file, the deadline) or cancelled. Each end is written with a
 * conditional update and only the process whose write took effect announces it (event) and meters it (afterCall), so
 * a task ends once however many processes share it.
 */
import type { StoredFile } from '@talon/agents';
import type { VideoPoll } from '@talon/media';
import type { VideoDeps } from './deps.ts';
import type { VideoTaskRow, VideoTaskStore } from './store.ts';

type Completed = Extract<VideoPoll, { state: 'completed' }>;

export class TaskEnds {
  constructor(
    private readonly deps: VideoDeps,
    private readonly tasks: VideoTaskStore,
  ) {}

  /** Stores the video and ends the task held by this node as completed. A refused file fails the task. */
  async complete(row: VideoTaskRow, poll: Completed): Promise<void> {
    const { deps } = this;
    let file: StoredFile;
    try {
      file = await deps.files().saveGenerated({
        kind: 'video',
        bytes: poll.video,
        name: `video-${row.task_id}`,
        agentId: row.agent_id ?? undefined,
        source: { provider: row.provider, model: poll.model },
      });
    } catch (err) {
      // Bytes that are no video (an HTML error page) or past the cap: the provider will not give better ones.
      if (!(err instanceof Error && err.name === 'FileRefused')) throw err;
      await this.fail(row, `the provider's video was refused: ${err.message}`);
      return;
    }
    const size = await this.measure(poll);
    const done = await this.tasks.complete(row.task_id, deps.nodes.id, { result_file_id: file.file_id, model: poll.model, ...size }, Date.now());
    if (!done) {
      // Cancelled (or taken over by another process) while the video was downloaded: the row's state stands, and the
      // file nobody links to goes with the generated-file retention.
      deps.log.info({ task_id: row.task_id, file_id: file.file_id }, 'video task ended elsewhere before its result was stored');
      return;
    }
    deps.events.publish('media.video_task', { task_id: row.task_id, provider: row.provider, status: 'completed', progress: 100, file_url: file.url });
    deps.events.publish('media.generated', {
      kind: 'video',
      file_id: file.file_id,
      url: file.url,
      provider: row.provider,
      model: poll.model,
      ...(row.agent_id ? { agent_id: row.agent_id } : {}),
    });
    await this.meter(row, { ok: true, model: poll.model, units: size.duration_secs ?? 0 });
  }

  /** Ends the task held by this node as failed with the reason; false when it had ended meanwhile (cancelled). */
  async fail(row: VideoTaskRow, error: string): Promise<boolean> {
    if (!(await this.tasks.fail(row.task_id, this.deps.nodes.id, error, Date.now()))) return false;
    this.deps.log.info({ task_id: row.task_id, provider: row.provider, error }, 'video task failed');
    this.deps.events.publish('media.video_task', { task_id: row.task_id, provider: row.provider, status: 'failed', error });
    await this.meter(row, { ok: false, model: row.model, units: 0, error });
    return true;
  }

  /** The deadline passed: failed, and the provider asked to stop (it may still be working, and billing). */
  async timeout(row: VideoTaskRow): Promise<void> {
    const minutes = Math.max(1, Math.round((row.deadline_at - row.created_at) / 60_000));
    if (await this.fail(row, `timed out after ${minutes} min`)) await this.cancelAtProvider(row);
  }

  /**
   * Announces a task the cancel route ended, at once; then, in the background (tracked: the route has answered, and a
   * provider's cancel may take up to video_timeout_secs), meters it and asks the provider to stop it where it can.
   */
  cancelled(row: VideoTaskRow): void {
    this.deps.events.publish('media.video_task', { task_id: row.task_id, provider: row.provider, status: 'cancelled', error: row.error ?? 'cancelled' });
    const rest = async () => {
      await this.meter(row, { ok: false, model: row.model, units: 0, error: 'cancelled' });
      await this.cancelAtProvider(row);
    };
    void this.deps.track(rest());
  }

  /** Best effort: the task is over here whatever the provider answers. Bounded, and stopped when this copy retires. */
  private async cancelAtProvider(row: VideoTaskRow): Promise<void> {
    const driver = this.deps.driver(row.provider);
    if (!driver?.cancelVideo) return;
    const signal = AbortSignal.any([this.deps.signal, AbortSignal.timeout(this.deps.config().video_timeout_secs * 1000)]);
    await driver.cancelVideo(row.provider_task_id, signal).catch((err: unknown) => {
      this.deps.log.warn({ task_id: row.task_id, provider: row.provider, err: errorText(err) }, 'the provider did not cancel the video task');
    });
  }

  /** Width, height and duration: the provider's where it gave them, else measured from the file (ffprobe). */
  private async measure(poll: Completed): Promise<{ width: number | null; height: number | null; duration_secs: number | null }> {
    const given = { width: poll.width ?? null, height: poll.height ?? null, duration_secs: poll.durationSecs ?? null };
    if (given.width !== null && given.height !== null && given.duration_secs !== null) return given;
    const info = await this.deps.probe(poll.video).catch((err: unknown) => {
      this.deps.log.warn({ err: errorText(err) }, 'could not measure a generated video');
      return undefined;
    });
    return {
      width: given.width ?? info?.width ?? null,
      height: given.height ?? info?.height ?? null,
      duration_secs: given.duration_secs ?? (info?.durationMs === undefined ? null : info.durationMs / 1000),
    };
  }

  private async meter(row: VideoTaskRow, outcome: { ok: boolean; model: string; units: number; error?: string }): Promise<void> {
    await this.deps
      .afterCall({
        kind: 'video',
        provider: row.provider,
        model: outcome.model,
        units: outcome.units,
        unit: 'seconds',
        ...(row.agent_id ? { agentId: row.agent_id } : {}),
        taskId: row.task_id,
        latencyMs: Date.now() - row.created_at,
        ok: outcome.ok,
        ...(outcome.error ? { error: outcome.error } : {}),
      })
      .catch((err: unknown) => this.deps.log.warn({ task_id: row.task_id, err: errorText(err) }, 'metering a video task failed'));
  }
}

export const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));
