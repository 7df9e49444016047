/**
 * The Signal channel adapter, speaking to a signal-cli daemon started with `--http` (and, so that nothing is received
 * while no stream listens, `--receive-mode=manual`): checks the daemon with the JSON-RPC `version` call (a refused
 * token stops the channel), then reads its event stream in the kit's reconnect loop (backoff with jitter; a stream
 * without its keep-alives for 45 s is rebuilt). Every request goes through the net module.
 */
import type { AdapterContext, ChannelAdapter, ChannelKit } from '@talon/channels';
import { signalFields } from '../config.ts';
import { readEvents, type StreamFetch } from './events.ts';
import { signalSender } from './outbound.ts';
import { isAuthFailure, signalRpc } from './rpc.ts';

/** Three of the daemon's 15 s keep-alives. */
const LIVENESS_MS = 45_000;

export function signalAdapter(kit: () => ChannelKit, stream: StreamFetch): ChannelAdapter {
  return {
    name: 'signal',
    description: 'Signal (through a signal-cli daemon: JSON-RPC and server-sent events over HTTP)',
    fields: signalFields,
    secretFields: [],
    urlFields: ['api_url'],
    capabilities: { threads: false, media: true, typing: true, edits: false, qr: false, platformDedup: false },
    // Signal sends a longer text as a "long text" attachment; 2,000 characters stay an ordinary message everywhere.
    limits: { maxLength: 2_000, unit: 'chars', format: 'plain' },
    start: (ctx) => start(ctx, kit(), stream),
  };
}

async function start(ctx: AdapterContext, kit: ChannelKit, stream: StreamFetch) {
  const root = String(ctx.config.api_url);
  const number = String(ctx.config.number);
  const token = ctx.secrets.token || undefined;
  const rpc = signalRpc(ctx, root, number, token);
  try {
    await rpc.call('version', {}, ctx.signal);
  } catch (err) {
    if (isAuthFailure(err)) throw err;
    ctx.log.warn({ error: (err as Error).message }, 'signal-cli daemon not reachable yet; retrying');
  }
  let previous: string | undefined;
  const loop = new kit.Reconnector({
    connect: (link) => readEvents(link, { ctx, kit, rpc, stream, root, number, ...(token ? { token } : {}) }),
    // The stream is cancelled with its link's signal: nothing else stays open.
    teardown: () => undefined,
    isAuthError: isAuthFailure,
    livenessMs: LIVENESS_MS,
    signal: ctx.signal,
    onState(health) {
      if (health.state === previous) return;
      previous = health.state;
      if (health.state === 'stopped') ctx.report('error', health.lastError ?? 'stopped');
      else if (health.state === 'waiting') ctx.report('connecting', health.lastError ?? undefined);
    },
  });
  const running = loop.run().catch((err: unknown) => ctx.log.error({ error: (err as Error).message }, 'signal event stream failed'));
  const sender = signalSender(rpc, kit, ctx.signal);
  return {
    send: sender.send,
    typing: sender.typing,
    async stop() {
      await running;
    },
  };
}
