/**
 * The sidecar adapter as the channels module sees it: one channel, `sidecar`, running the configured program. Its
 * capabilities are what protocol v1 can carry: text both ways, threads (`thread_id` on messages and sends), typing
 * (sent when the program's `ready` lists it), QR sign-in (when the program publishes a code). No media, no edits, no
 * send result the platform deduplicates. Messages are chunked at 4096 UTF-16 units, the smallest common limit of
 * the reference's main adapters (Telegram's), in markdown, which they render themselves.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { ChannelAdapter } from '@talon/channels';
import type { SandboxService } from '@talon/tools';
import { sidecarFields, sidecarSettings } from '../config.ts';
import { qrSession } from './qr.ts';
import { channelError, Supervisor } from './supervisor.ts';

export const SIDECAR_MAX_LENGTH = 4096;
/** How long a QR sign-in waits for the running program to publish its code. */
const QR_WAIT_MS = 10_000;

export function sidecarAdapter(sandbox: () => SandboxService, dataDir: string): ChannelAdapter {
  const running = new Map<string, Supervisor>();
  return {
    name: 'sidecar',
    description: "Sidecar: any adapter program speaking the reference's sidecar protocol v1 on stdio, run in the subprocess sandbox",
    fields: sidecarFields,
    secretFields: [],
    urlFields: [],
    capabilities: { threads: true, media: false, typing: true, edits: false, qr: true, platformDedup: false },
    limits: { maxLength: SIDECAR_MAX_LENGTH, unit: 'utf16', format: 'markdown' },
    async start(ctx) {
      // The program's home and working directory: where an adapter keeps its own state (a QR login) across restarts.
      const cwd = path.join(dataDir, ctx.channel);
      await mkdir(cwd, { recursive: true, mode: 0o700 });
      const supervisor = new Supervisor(ctx, sidecarSettings(ctx.config, ctx.secrets), sandbox, cwd);
      running.set(ctx.channel, supervisor);
      supervisor.start();
      return {
        send: (chunk) => supervisor.send(chunk),
        typing: (target) => supervisor.typing(target),
        async stop() {
          await supervisor.stop();
          if (running.get(ctx.channel) === supervisor) running.delete(ctx.channel);
        },
      };
    },
    async qr(ctx) {
      const read = () => running.get(ctx.channel)?.qr;
      const deadline = Date.now() + QR_WAIT_MS;
      while (!read()?.code && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
      const first = read();
      if (!first?.code) throw channelError('permanent', 'the sidecar program published no QR code (is it running, and does it sign in by QR?)');
      return qrSession(first, read);
    },
  };
}
