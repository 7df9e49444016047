/**
 * What a stored file is, decided from its bytes (npm file-type), never from a label a client or a provider gave:
 * which types each generated kind accepts, which types are served inline, and which are "active" (a browser would
 * run them: HTML, SVG, XML, scripts), which are never stored or served as such.
 */
import { fileTypeFromBuffer } from 'file-type';
import type { GeneratedKind } from '@talon/agents';

export interface Sniffed {
  mime: string;
  ext: string;
}

/** The rejection of UploadFiles.saveGenerated (the contract names it 'FileRefused'). */
export class FileRefused extends Error {
  override readonly name = 'FileRefused';
}

/** The sniffed types each kind takes, with the extension a stored file gets. */
const KIND_TYPES: Record<GeneratedKind, Record<string, string>> = {
  image: { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp', 'image/gif': 'gif' },
  audio: {
    'audio/mpeg': 'mp3',
    'audio/wav': 'wav',
    'audio/ogg': 'ogg',
    'audio/ogg; codecs=opus': 'opus',
    'audio/flac': 'flac',
    'audio/aac': 'aac',
    'audio/mp4': 'm4a',
    'audio/x-m4a': 'm4a',
    'audio/webm': 'webm',
  },
  video: { 'video/mp4': 'mp4', 'video/webm': 'webm', 'video/quicktime': 'mov' },
};

/**
 * The bytes cannot tell an audio-only MP4 or WebM from a video one (that takes reading the tracks): for an audio
 * result the container is named as audio.
 */
const AUDIO_CONTAINERS: Record<string, string> = { 'video/mp4': 'audio/mp4', 'video/webm': 'audio/webm' };

/** Served inline (a browser shows or plays them; none of them runs code). */
const INLINE = new Set(Object.values(KIND_TYPES).flatMap((types) => Object.keys(types).map(baseType)));

function baseType(mime: string): string {
  return mime.split(';')[0].trim().toLowerCase();
}

/** Types a browser renders as a document or runs: HTML, SVG, any XML (it may carry XHTML and script), scripts, Flash. */
const ACTIVE =
  /^(text\/(html|xml|xsl|javascript|ecmascript|x-javascript)|application\/(xml|xhtml\+xml|javascript|ecmascript|x-javascript|x-shockwave-flash|[\w.-]+\+xml)|image\/svg\+xml|multipart\/x-mixed-replace)$/;

export function isActive(mime: string): boolean {
  return ACTIVE.test(baseType(mime));
}

export function isInline(mime: string): boolean {
  return INLINE.has(baseType(mime)) && !isActive(mime);
}

async function sniff(bytes: Buffer): Promise<Sniffed | undefined> {
  const found = await fileTypeFromBuffer(bytes);
  return found && { mime: found.mime, ext: found.ext };
}

const MIME = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/;

/**
 * An uploaded file's type: what its bytes are when they tell, else the client's label when it is a well-formed type
 * that nothing runs; `application/octet-stream` otherwise (a client's text/html stays a download).
 */
export async function uploadType(bytes: Buffer, label: string | undefined): Promise<Sniffed | undefined> {
  const sniffed = await sniff(bytes);
  if (sniffed) return isActive(sniffed.mime) ? undefined : sniffed;
  const given = baseType(label ?? '');
  if (!MIME.test(given) || isActive(given)) return undefined;
  return { mime: given, ext: '' };
}

/** A generated file's type, or FileRefused saying why its bytes are not of the kind. */
export async function generatedType(kind: GeneratedKind, bytes: Buffer): Promise<Sniffed> {
  const sniffed = await sniff(bytes);
  if (!sniffed) throw new FileRefused(`the ${kind} is of no known type (${describe(bytes)})`);
  const mime = kind === 'audio' ? (AUDIO_CONTAINERS[sniffed.mime] ?? sniffed.mime) : sniffed.mime;
  const ext = KIND_TYPES[kind][mime];
  if (!ext) throw new FileRefused(`the ${kind} is ${sniffed.mime}, which is not an accepted ${kind} type (${Object.keys(KIND_TYPES[kind]).join(', ')})`);
  return { mime, ext };
}

/** A hint for the refusal: a provider's HTML or JSON error page is the usual culprit. */
function describe(bytes: Buffer): string {
  const head = bytes.subarray(0, 64).toString('latin1').trimStart().toLowerCase();
  if (head.startsWith('<!doctype html') || head.startsWith('<html')) return 'it looks like an HTML page';
  if (head.startsWith('{') || head.startsWith('[')) return 'it looks like JSON';
  return `${bytes.length} bytes`;
}
