/**
 * Files on a channel, both ways. Inbound: an image the adapter downloaded reaches the model as an image block of the
 * user message (the way an uploaded attachment does); any other file, or one not downloaded, is a note naming it.
 * Outbound: a file with content goes out as an upload on a channel that takes them (`capabilities.media`), a file
 * given by URL as a link in the text; content for a channel without uploads is refused, since it could not arrive.
 * A reply's file that cannot go out as an upload is a note in the text saying so, never a link that would not open.
 */
import type { SessionStore, StoredFile, UploadFiles } from '@talon/agents';
import type { InboundMessage, OutboundMedia } from '@talon/channels';

export type UserBlocks = NonNullable<Parameters<SessionStore['appendUser']>[3]>;

/** The image types every vision model takes inline; other images are named like any file. */
const INLINE_IMAGES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
/** A file sent out is a journal row until it is sent: one over this is refused rather than stored. */
export const MAX_OUTBOUND_MEDIA_BYTES = 20 * 1024 * 1024;

/** The user message of an inbound message: its text with notes for the files, and the images as blocks. */
export function userMessage(m: InboundMessage): { text: string; blocks?: UserBlocks } {
  const images = (m.media ?? []).filter((f) => f.data && INLINE_IMAGES.has(f.mediaType.toLowerCase()));
  const notes = (m.media ?? []).filter((f) => !images.includes(f)).map((f) => `[attachment: ${f.name ?? 'file'} (${f.mediaType})${f.url ? ` ${f.url}` : ''}]`);
  const text = [m.text, ...notes].filter(Boolean).join('\n');
  if (!images.length) return { text };
  const blocks: UserBlocks = [
    ...(text ? [{ type: 'text' as const, text }] : []),
    ...images.map((f) => ({ type: 'image' as const, mediaType: f.mediaType.toLowerCase(), data: f.data! })),
  ];
  return { text, blocks };
}

/** What is wrong with files to send on a channel (`uploads`: it takes files), naming the field; undefined when fine. */
export function mediaProblem(media: readonly OutboundMedia[], uploads: boolean): string | undefined {
  for (const [i, f] of media.entries()) {
    const field = `media[${i}]`;
    if (!f.name?.trim()) return `${field}.name: required`;
    if (!f.mediaType?.trim()) return `${field}.mediaType: required`;
    if ((f.data === undefined) === (f.url === undefined)) return `${field}: give exactly one of data (base64 content) or url`;
    if (f.url !== undefined && !/^https?:\/\/\S+$/i.test(f.url)) return `${field}.url: expected an http(s) URL`;
    if (f.data !== undefined) {
      if (!uploads) return `${field}: this channel takes no uploads; give the file as a url to send it as a link`;
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(f.data)) return `${field}.data: expected base64`;
      if (Buffer.byteLength(f.data, 'base64') > MAX_OUTBOUND_MEDIA_BYTES) return `${field}.data: over ${MAX_OUTBOUND_MEDIA_BYTES} bytes`;
    }
  }
  return undefined;
}

/**
 * Splits checked files into uploads (their own chunks) and links (lines of the text, chunked with it); `notes` (files
 * of a reply that cannot go out, see replyMedia) are lines after the text.
 */
export function placeMedia(text: string, media: readonly OutboundMedia[], notes: readonly string[] = []): { text: string; uploads: OutboundMedia[] } {
  const links = media.filter((f) => f.url !== undefined).map((f) => `${f.name}: ${f.url}`);
  return { text: [text, ...notes, ...links].filter((s) => s.trim()).join('\n'), uploads: media.filter((f) => f.data !== undefined) };
}

/**
 * The files a reply's tools made (TurnResult.files), as the channel takes them: their bytes from the upload store as
 * uploads where the channel takes files and the file fits a journal row. Any other file is a note naming it, its type
 * and size, and why it did not come: its address (/api/uploads/<id>) is relative to this service and needs its API
 * key, so a chat user could not open it as a link.
 */
export async function replyMedia(
  files: readonly StoredFile[],
  uploads: boolean,
  store: Pick<UploadFiles, 'read'>,
): Promise<{ uploads: OutboundMedia[]; notes: string[] }> {
  const out: OutboundMedia[] = [];
  const notes: string[] = [];
  const note = (f: StoredFile, why: string) => notes.push(`${f.filename} (${f.content_type}, ${sizeText(f.size)}) — ${why}`);
  for (const f of files) {
    if (!uploads) note(f, "this channel takes no files; open it in Talon's dashboard");
    else if (f.size > MAX_OUTBOUND_MEDIA_BYTES) note(f, "too large to send here; open it in Talon's dashboard");
    else {
      const read = await store.read(f.file_id);
      if (read) out.push({ name: f.filename, mediaType: read.content_type, data: read.bytes.toString('base64') });
      else note(f, 'no longer stored');
    }
  }
  return { uploads: out, notes };
}

/** A size as a person reads it: bytes, KB or MB (1024-based, as file managers show them). */
export function sizeText(bytes: number): string {
  if (bytes < 1024) return bytes === 1 ? '1 byte' : `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
