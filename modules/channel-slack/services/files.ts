/**
 * Files both ways. In: a shared file's `url_private` downloaded with the bot token (Slack serves it to a token of the
 * workspace with `files:read`) through the context's net fetch, capped; a file too large, gone, or refused is named
 * for the agent instead. Out: an upload through the WebClient's filesUploadV2 (files.getUploadURLExternal, the bytes
 * POSTed to the upload_url it returns, files.completeUploadExternal sharing it into the chat and thread).
 */
import type { WebClient } from '@slack/web-api';
import type { AdapterContext, InboundMedia, InboundMessage, OutboundChunk, OutboundMedia } from '@talon/channels';
import { toInbound, type SlackMessageEvent } from './events.ts';
import { fileUrlAllowed } from './web.ts';

/**
 * Files larger than this are named for the agent, not downloaded: the content is stored in the journal row and sent to
 * the model, and models refuse far smaller images (the same cap as the Telegram adapter's).
 */
export const MAX_MEDIA_BYTES = 10 * 1024 * 1024;
const DOWNLOAD_TIMEOUT_MS = 60_000;

/** The fields of Slack's file object a download needs (an event's `files`). */
export interface SlackFile {
  name?: string;
  mimetype?: string;
  size?: number;
  url_private?: string;
  /** `tombstone` (deleted), `hidden_by_limit` (a free workspace's old file): no content to fetch. */
  mode?: string;
}

/** What the adapter needs to read an event: the bot's identity (mentions), its token and the API root (downloads). */
export interface EventReader {
  ctx: AdapterContext;
  bot: { userId: string; teamId?: string };
  token: string;
  apiUrl: string;
}

/** An event as the message the journal takes, its files downloaded; undefined for an event the agent does not hear. */
export async function readEvent(reader: EventReader, event: SlackMessageEvent): Promise<InboundMessage | undefined> {
  const message = toInbound(event, reader.bot);
  if (!message || !event.files?.length) return message;
  return { ...message, media: await downloadFiles(reader.ctx, reader.token, reader.apiUrl, event.files) };
}

/** What the bot is shown of a file it cannot fetch: its name and type, for the agent to mention. */
const note = (f: SlackFile): InboundMedia => ({ mediaType: f.mimetype ?? 'application/octet-stream', ...(f.name ? { name: f.name } : {}) });

/**
 * The files of a message, downloaded where possible. Throws on a failure a redelivery may not repeat (a network error,
 * a 5xx), so the event is not acknowledged and Slack sends it again.
 */
async function downloadFiles(ctx: AdapterContext, token: string, apiUrl: string, files: readonly SlackFile[]): Promise<InboundMedia[]> {
  const media: InboundMedia[] = [];
  for (const f of files) media.push(await download(ctx, token, apiUrl, f));
  return media;
}

async function download(ctx: AdapterContext, token: string, apiUrl: string, f: SlackFile): Promise<InboundMedia> {
  if (!f.url_private || (f.size ?? 0) > MAX_MEDIA_BYTES || (f.mode !== undefined && f.mode !== 'hosted' && f.mode !== 'snippet')) return note(f);
  // The token goes only to Slack's file hosts (or the configured api_url's origin): an event could name any URL.
  if (!fileUrlAllowed(f.url_private, apiUrl)) {
    ctx.log.warn({ file: f.name }, 'slack file not downloaded: its url_private is outside Slack');
    return note(f);
  }
  const res = await ctx.fetch({
    url: f.url_private,
    method: 'GET',
    headers: { authorization: `Bearer ${token}` },
    timeoutMs: DOWNLOAD_TIMEOUT_MS,
    maxBytes: MAX_MEDIA_BYTES,
    // A token without files:read is redirected to Slack's sign-in page: that answer is not the file.
    maxRedirects: 0,
    signal: ctx.signal,
  });
  if (res.status >= 500) throw new Error(`slack: file download failed with status ${res.status}`);
  if (res.status !== 200 || res.truncated) {
    ctx.log.warn({ file: f.name, status: res.status, truncated: res.truncated }, 'slack file not downloaded');
    return note(f);
  }
  return { ...note(f), name: f.name ?? 'file', data: res.body.toString('base64') };
}

/** Uploads one file into the chunk's chat (and thread); resolves with Slack's file id. */
export async function uploadFile(web: WebClient, chunk: OutboundChunk, media: OutboundMedia & { data: string }): Promise<string> {
  const destination = chunk.threadId ? { channel_id: chunk.chatId, thread_ts: chunk.threadId } : { channel_id: chunk.chatId };
  const answer = await web.filesUploadV2({
    ...destination,
    file: Buffer.from(media.data, 'base64'),
    filename: media.name,
    title: media.name,
    // The channels module sends uploads as chunks without text; a text given with one is its comment.
    ...(chunk.text.trim() ? { initial_comment: chunk.text } : {}),
  });
  const completed = answer.files as Array<{ files?: Array<{ id?: string }> }>;
  const id = completed[0]?.files?.[0]?.id;
  if (!id) throw new Error('slack: files.completeUploadExternal answered without a file id');
  return id;
}
