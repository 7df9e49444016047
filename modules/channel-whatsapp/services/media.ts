/**
 * Files both ways through the Graph media endpoints. In: `GET /{media-id}` gives a short-lived URL, downloaded with the
 * token up to MAX_MEDIA_BYTES (a larger one reaches the agent as a note naming it). The URL must be https on Meta's
 * media hosts, or on the configured api_url's origin (a local fake): the token goes only where Graph's files live.
 * Out: `POST /{phone-number-id}/media` (multipart: file, type, messaging_product) answers an id the message carries.
 */
import type { InboundMedia, OutboundMedia } from '@talon/channels';
import { channelError, toChannelError } from './errors.ts';
import { graphCall, multipart, type Graph } from './graph.ts';

/** WhatsApp takes files up to 100 MB; a chat turn needs far less, and the journal keeps what it is given. */
export const MAX_MEDIA_BYTES = 10 * 1024 * 1024;
const MEDIA_HOSTS = /(^|\.)(fbsbx\.com|whatsapp\.net|fbcdn\.net|facebook\.com)$/;

/** Why the token may not go to `url`, or undefined when it may. */
export function mediaUrlProblem(url: string, apiRoot: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'not a URL';
  }
  if (parsed.origin === new URL(apiRoot).origin) return undefined;
  if (parsed.protocol !== 'https:') return 'not https';
  return MEDIA_HOSTS.test(parsed.hostname) ? undefined : `${parsed.hostname} is not a WhatsApp media host`;
}

export interface MediaRef {
  id: string;
  mimeType: string;
  name?: string;
}

/** The file as the agent gets it: its content, or a note when it is too large or its URL is refused. */
export async function downloadMedia(graph: Graph, ref: MediaRef): Promise<InboundMedia> {
  const named = { mediaType: ref.mimeType, ...(ref.name ? { name: ref.name } : {}) };
  const info = await graphCall(graph, 'GET', `/${encodeURIComponent(ref.id)}`);
  const size = typeof info.file_size === 'number' ? info.file_size : undefined;
  if (typeof info.url !== 'string') throw channelError('transient', `whatsapp: media ${ref.id} has no url`);
  const refused = mediaUrlProblem(info.url, graph.root);
  if (refused) {
    graph.ctx.log.warn({ media: ref.id, refused }, 'whatsapp media URL refused; the file is named only');
    return named;
  }
  if (size !== undefined && size > MAX_MEDIA_BYTES) return named;
  const res = await graph.ctx
    .fetch({
      url: info.url,
      headers: { authorization: `Bearer ${graph.token}` },
      timeoutMs: 60_000,
      maxBytes: MAX_MEDIA_BYTES,
      maxRedirects: 0,
      signal: graph.ctx.signal,
    })
    .catch((err: unknown) => {
      throw channelError('transient', `whatsapp: media download failed: ${err instanceof Error ? err.message : String(err)}`);
    });
  if (res.status !== 200) throw toChannelError(res.status, undefined, undefined);
  if (res.truncated) return named;
  return { ...named, data: res.body.toString('base64') };
}

/** Which WhatsApp message type carries a file: images only as JPEG or PNG, audio and video by their kind. */
export function messageTypeOf(mediaType: string): 'image' | 'audio' | 'video' | 'document' {
  if (/^image\/(jpeg|png)$/.test(mediaType)) return 'image';
  if (/^audio\/(aac|amr|mpeg|mp4|ogg)(;|$)/.test(mediaType)) return 'audio';
  if (/^video\/(mp4|3gpp)$/.test(mediaType)) return 'video';
  return 'document';
}

/** Uploads the file; resolves with its media id. */
export async function uploadMedia(graph: Graph, phoneNumberId: string, media: OutboundMedia & { data: string }): Promise<string> {
  const bytes = await multipart(
    { messaging_product: 'whatsapp', type: media.mediaType },
    { name: media.name, type: media.mediaType, data: Buffer.from(media.data, 'base64') },
  );
  const answer = await graphCall(graph, 'POST', `/${phoneNumberId}/media`, { bytes });
  if (typeof answer.id !== 'string') throw channelError('transient', 'whatsapp: the media upload answered no id');
  return answer.id;
}
