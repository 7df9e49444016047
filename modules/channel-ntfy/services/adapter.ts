/** The ntfy adapter as the channels module sees it: its fields, what ntfy topics can do, and the message limit. */
import type { ChannelAdapter, ChannelKit } from '@talon/channels';
import { ntfyFields, ntfySettings } from '../config.ts';
import { startNtfy, type NtfyTuning, type StreamFetch } from './connection.ts';
import type { Cursor } from './cursor.ts';

/** ntfy's default message-size-limit: a longer body would be turned into an attachment (or refused). */
export const NTFY_MAX_BYTES = 4096;
const DEFAULT_TUNING: NtfyTuning = { livenessMs: 3 * 45_000, streamMs: 10 * 60_000 };

export function ntfyAdapter(kit: ChannelKit, stream: StreamFetch, cursor: Cursor, tuning: NtfyTuning = DEFAULT_TUNING): ChannelAdapter {
  return {
    name: 'ntfy',
    description: 'ntfy (push notifications): messages published to the topics, replies published back to them',
    fields: ntfyFields,
    secretFields: [],
    urlFields: ['server_url'],
    // A topic is one conversation without threads; no typing or edits; a publish carries no id the server deduplicates.
    capabilities: { threads: false, media: false, typing: false, edits: false, qr: false, platformDedup: false },
    limits: { maxLength: NTFY_MAX_BYTES, unit: 'bytes', format: 'plain' },
    async start(ctx) {
      return startNtfy(ctx, ntfySettings(ctx.config, ctx.secrets), kit, stream, cursor, tuning);
    },
  };
}
