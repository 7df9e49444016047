/**
 * The files of a message in: each attachment downloaded through the channel's net fetch (Discord's CDN URLs carry a
 * signature that expires, not the bot token), so an image reaches the model as itself. One over the cap, refused or
 * gone stays a link with its name; a server failure is thrown, so the message is tried again.
 */
import type { APIAttachment } from '@discordjs/core';
import type { AdapterContext, InboundMedia } from '@talon/channels';

/**
 * Files larger than this are named for the agent, not downloaded: the content is stored in the journal row and sent to
 * the model, and models refuse far smaller images (Discord lets users upload 10 MB and more).
 */
export const MAX_MEDIA_BYTES = 10 * 1024 * 1024;
const TIMEOUT_MS = 60_000;

/** Whether an attachment URL is Discord's CDN (https) or on the configured api_url's host (a loopback test server). */
export function attachmentAllowed(url: string, apiUrl: string): boolean {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return false;
  }
  if (target.protocol === 'https:' && ['cdn.discordapp.com', 'media.discordapp.net'].includes(target.hostname)) return true;
  const api = new URL(apiUrl);
  return target.protocol === api.protocol && target.host === api.host;
}

async function download(ctx: Pick<AdapterContext, 'fetch'>, a: APIAttachment): Promise<string | undefined> {
  let res;
  try {
    res = await ctx.fetch({ url: a.url, method: 'GET', timeoutMs: TIMEOUT_MS, maxBytes: MAX_MEDIA_BYTES, maxRedirects: 0 });
  } catch (err) {
    // net's SSRF refusal will not change on a retry; a network failure may.
    if (err instanceof Error && err.name === 'FetchRefused') return undefined;
    throw err;
  }
  if (res.status >= 500) throw new Error(`Discord attachment download failed with status ${res.status}`);
  return res.status === 200 && !res.truncated ? res.body.toString('base64') : undefined;
}

/** The attachments as InboundMedia: with their content where downloaded, else their name and link. */
export async function fetchAttachments(ctx: Pick<AdapterContext, 'fetch'>, apiUrl: string, attachments: readonly APIAttachment[]): Promise<InboundMedia[]> {
  const media: InboundMedia[] = [];
  for (const a of attachments) {
    const file = { mediaType: a.content_type ?? 'application/octet-stream', name: a.filename };
    const fits = a.size <= MAX_MEDIA_BYTES && attachmentAllowed(a.url, apiUrl);
    const data = fits ? await download(ctx, a) : undefined;
    media.push(data === undefined ? { ...file, url: a.url } : { ...file, data });
  }
  return media;
}
