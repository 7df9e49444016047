/**
 * Files in the inbound webhook body: `media: [{name, media_type, data | url}]`, each checked and named by its index
 * when wrong. Content comes as base64 (decoded size capped, since it is stored in the journal row and sent to the
 * model); a link only as http(s), which the agent sees as a note and never fetched here.
 */
import type { InboundMedia } from '@talon/channels';

/** The decoded bytes of all files of one message together. */
export const MAX_MEDIA_BYTES = 10 * 1024 * 1024;
export const MAX_FILES = 10;
/** The inbound body's cap: the files as base64 (4 characters per 3 bytes) and room for the rest of the message. */
export const MAX_BODY_BYTES = Math.ceil(MAX_MEDIA_BYTES / 3) * 4 + 256 * 1024;

/** A flat character class: a grouped repetition overflows the regex engine's stack on a file of megabytes. */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/i;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The files of a body's `media` (absent: none), or the first thing wrong with them. */
export function parseMedia(value: unknown): { media: InboundMedia[] } | { error: string } {
  if (value === undefined) return { media: [] };
  if (!Array.isArray(value) || value.length > MAX_FILES) return { error: `media: expected an array of at most ${MAX_FILES} files` };
  const media: InboundMedia[] = [];
  let bytes = 0;
  for (const [i, f] of value.entries()) {
    const field = `media[${i}]`;
    if (!isRecord(f)) return { error: `${field}: expected an object {name, media_type, data | url}` };
    const unknown = Object.keys(f).find((k) => !['name', 'media_type', 'data', 'url'].includes(k));
    if (unknown) return { error: `${field}.${unknown}: unknown field` };
    if (typeof f.name !== 'string' || !f.name.trim() || f.name.length > 255) return { error: `${field}.name: expected a string of 1 to 255 characters` };
    if (typeof f.media_type !== 'string' || !MEDIA_TYPE.test(f.media_type)) return { error: `${field}.media_type: expected a media type such as image/png` };
    if ((f.data === undefined) === (f.url === undefined)) return { error: `${field}: give exactly one of data (base64 content) or url` };
    if (f.url !== undefined) {
      if (typeof f.url !== 'string' || f.url.length > 2048 || !/^https?:\/\/\S+$/i.test(f.url) || !URL.canParse(f.url))
        return { error: `${field}.url: expected an http(s) URL` };
      media.push({ name: f.name, mediaType: f.media_type, url: f.url });
      continue;
    }
    if (typeof f.data !== 'string' || !f.data || f.data.length % 4 !== 0 || !BASE64.test(f.data)) return { error: `${field}.data: expected base64 content` };
    bytes += Buffer.byteLength(f.data, 'base64');
    if (bytes > MAX_MEDIA_BYTES) return { error: `${field}.data: the files of a message may hold at most ${MAX_MEDIA_BYTES} bytes` };
    media.push({ name: f.name, mediaType: f.media_type, data: f.data });
  }
  return { media };
}
