/**
 * The running adapter as the webhook route sees it. Meta POSTs a batch of changes; the route checks the signature on the
 * raw bytes first, then the receiver commits each message (files fetched first) and resolves only once all are in
 * the journal: the route's 200 is Meta's acknowledgement, and anything not committed makes the whole batch come again
 * (the journal drops the messages of it that it already has, by their wamid).
 */
import type { AdapterContext, InboundMedia } from '@talon/channels';
import type { Graph } from './graph.ts';
import { readPayload } from './inbound.ts';
import { downloadMedia, type MediaRef } from './media.ts';
import { sameToken, signatureProblem } from './signature.ts';

export interface WhatsAppReceiver {
  /** The verification GET's token is the configured verify_token. */
  verifies(token: unknown): boolean;
  /** Why the POST's signature is refused, or undefined. */
  signatureProblem(header: unknown, raw: Buffer): string | undefined;
  /** Commits the payload's messages; `error` when the body is not a WhatsApp payload (nothing stored). */
  take(raw: string): Promise<{ error: string } | { messages: number; duplicates: number }>;
}

/** The module's slot for the running receiver: in the module copy's closure, so a reload swaps route and adapter together. */
export interface WhatsAppEndpoint {
  current?: WhatsAppReceiver;
}

export function webhookReceiver(
  ctx: AdapterContext,
  graph: Graph,
  phoneNumberId: string,
  secrets: { appSecret: string; verifyToken: string },
): WhatsAppReceiver {
  return {
    verifies: (token) => sameToken(token, secrets.verifyToken),
    signatureProblem: (header, raw) => signatureProblem(secrets.appSecret, header, raw),
    async take(raw) {
      const read = readPayload(raw, phoneNumberId);
      if ('error' in read) return read;
      let duplicates = 0;
      // In order, one after the other: the journal sees a sender's messages as they were sent.
      for (const { message, media } of read.messages) {
        const files = media ? [await fetchOrName(ctx, graph, media)] : undefined;
        const result = await ctx.emit({ ...message, ...(files ? { media: files } : {}) });
        if (result.duplicate) duplicates += 1;
      }
      return { messages: read.messages.length, duplicates };
    },
  };
}

/**
 * The file's content; a file Graph refuses for good (deleted, expired, unknown id) is named for the agent instead, so
 * the message is not redelivered for days over a file no retry brings back. A transient failure, a rate limit or a
 * refused token is thrown: the batch is not acknowledged and Meta delivers it again.
 */
async function fetchOrName(ctx: AdapterContext, graph: Graph, media: MediaRef): Promise<InboundMedia> {
  try {
    return await downloadMedia(graph, media);
  } catch (err) {
    if (!(err instanceof Error && (err as { kind?: unknown }).kind === 'permanent')) throw err;
    ctx.log.warn({ media: media.id, error: err.message }, 'whatsapp media not available; the file is named only');
    return { mediaType: media.mimeType, ...(media.name ? { name: media.name } : {}) };
  }
}
