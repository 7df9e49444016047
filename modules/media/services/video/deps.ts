/** What the video tasks need from the media module: handed in by index.ts, so the services never hold a context. */
import type { Logger } from 'pino';
import type { EventChannel, NodeAccess, Store } from '@talon/module-sdk';
import type { UploadFiles } from '@talon/agents';
import type { MediaCallRecord, MediaDriver, MediaInfo, mediaEvents } from '@talon/media';
import type { MediaConfig } from '../../config.ts';
import type { VideoGate } from './gate.ts';

export type VideoConfig = Pick<
  MediaConfig,
  'video_timeout_secs' | 'video_deadline_mins' | 'video_poll_first_secs' | 'video_poll_factor' | 'video_poll_max_secs'
>;

export interface VideoDeps {
  store: Store;
  /** This process (the claims' owner) and how long a claim lasts unrenewed. */
  nodes: Pick<NodeAccess, 'id' | 'leaseMs' | 'active'>;
  config: () => VideoConfig;
  log: Logger;
  /** The running driver of that provider (a driver module may be stopped or reloaded while a task waits). */
  driver: (provider: string) => MediaDriver | undefined;
  files: () => UploadFiles;
  probe: (bytes: Buffer) => Promise<MediaInfo>;
  /** mediaHooks.afterCall: metering, when a task ends. */
  afterCall: (record: MediaCallRecord) => Promise<void>;
  events: EventChannel<typeof mediaEvents>;
  /** One finished video in memory at a time: the kit's download waits for it inside a poll (gate.ts). */
  gate: VideoGate;
  /** ctx.track: work that outlives the request that began it (the provider's cancel after DELETE has answered). */
  track: <T>(work: Promise<T>) => Promise<T>;
  /** ctx.signal: aborted when this copy of the module retires (the background work stops with it). */
  signal: AbortSignal;
}
