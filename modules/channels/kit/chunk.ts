/**
 * Splits a reply into chunks a platform accepts, measured in the platform's own unit, so no platform truncates or
 * rejects a long answer. Cuts prefer a paragraph break, then a line break, then a sentence end, then a space; a cut
 * never falls inside a surrogate pair, a grapheme cluster (where another cut is possible), an HTML character
 * reference, a Markdown link, an inline code span, an HTML tag or a code fence's own lines, and a code fence cut at a
 * chunk boundary is closed at the end of the chunk and reopened (with its info string) at the start of the next.
 */

/** What the limit counts: UTF-16 code units (Telegram), Unicode code points (Discord), UTF-8 bytes (IRC). */
export type ChunkUnit = 'utf16' | 'chars' | 'bytes';

export interface ChunkLimits {
  /** The most units one chunk may hold, fence repairs included. */
  max: number;
  unit: ChunkUnit;
  /** The most lines one chunk may hold (Discord: 17; IRC: 1, each line being its own message). */
  maxLines?: number;
  /** Close and reopen a code fence cut at a boundary (default true; off for plain text such as IRC lines). */
  fences?: boolean;
}

/** One chunk: `body` is an exact slice of the input, `separator` the whitespace dropped at the cut after it. */
export interface ChunkPiece {
  /** The reopened fence line (with its newline) put before the body, or ''. */
  open: string;
  body: string;
  /** The newline and fence marker put after the body to close a fence it cuts, or ''. */
  close: string;
  separator: string;
}

/** Telegram's sendMessage text limit, in UTF-16 code units. */
export const TELEGRAM_LIMITS: ChunkLimits = { max: 4096, unit: 'utf16' };
/** Discord's message limit, and the line count past which its client collapses a message. */
export const DISCORD_LIMITS: ChunkLimits = { max: 2000, unit: 'chars', maxLines: 17 };

/** RFC 2812: a message is at most 512 bytes including its trailing CRLF. */
const IRC_LINE_BYTES = 512;
/**
 * The relay prefix `:nick!user@host ` a server puts before a PRIVMSG it forwards also counts against the 512 bytes
 * the receivers see; without the real hostmask, reserve the longest common one (NICKLEN 30, USERLEN 10, HOSTLEN 63).
 */
const IRC_WORST_HOSTMASK_BYTES = 1 + 30 + 1 + 10 + 1 + 63 + 1;

/**
 * IRC's budget for the text of one PRIVMSG to `target`: 512 bytes less `PRIVMSG <target> :`, the CRLF and the relay
 * prefix (`hostmask` when the client knows its own, as seen in its RPL_WELCOME or a JOIN echo).
 */
export function ircLimits(target: string, hostmask?: string): ChunkLimits {
  const relay = hostmask === undefined ? IRC_WORST_HOSTMASK_BYTES : utf8Bytes(`:${hostmask} `);
  const max = IRC_LINE_BYTES - utf8Bytes(`PRIVMSG ${target} :`) - 2 - relay;
  if (max < 4) throw new RangeError(`the IRC target '${target}' leaves no room for text in a 512-byte line`);
  return { max, unit: 'bytes', maxLines: 1, fences: false };
}

/** The chunks to send, in order, each within `limits`; whitespace-only chunks are left out. */
export function chunkText(text: string, limits: ChunkLimits): string[] {
  return chunkPieces(text, limits)
    .filter((p) => p.body.trim() !== '')
    .map((p) => p.open + p.body + p.close);
}

/** Units of s in `unit`. */
export function measure(s: string, unit: ChunkUnit): number {
  if (unit === 'utf16') return s.length;
  if (unit === 'bytes') return utf8Bytes(s);
  let n = 0;
  for (let i = 0; i < s.length; i += codePointWidth(s, i)) n++;
  return n;
}

function utf8Bytes(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

/** UTF-16 units of the code point at i: 2 for a whole surrogate pair, else 1 (a lone surrogate stands alone). */
function codePointWidth(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
    const d = s.charCodeAt(i + 1);
    if (d >= 0xdc00 && d <= 0xdfff) return 2;
  }
  return 1;
}

function unitsOf(s: string, i: number, width: number, unit: ChunkUnit): number {
  if (unit === 'utf16') return width;
  if (unit === 'chars') return 1;
  if (width === 2) return 4;
  const c = s.charCodeAt(i);
  return c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
}

interface Fence {
  /** Index of the opening line's first character. */
  openStart: number;
  /** The opening line, indentation and info string included, without its line break. */
  openLine: string;
  /** The run of backticks or tildes that opened it: the closing marker. */
  marker: string;
  /** Index just past the opening line's line break: where the code starts. */
  contentStart: number;
  /** Index of the closing line's first character (the text's length when the fence is never closed). */
  closeStart: number;
  /** Index just past the closing marker line's text. */
  closeEnd: number;
}

const OPEN_FENCE = /^( {0,3})(`{3,}|~{3,})(.*)$/;

function findFences(text: string): Fence[] {
  const fences: Fence[] = [];
  const lines = [...text.matchAll(/[^\r\n]*(?:\r\n|\r|\n|$)/g)].filter((m) => m[0] !== '' || m.index < text.length);
  let open: Omit<Fence, 'closeStart' | 'closeEnd'> | undefined;
  for (const m of lines) {
    const full = m[0];
    const line = full.replace(/(?:\r\n|\r|\n)$/, '');
    if (!open) {
      const o = OPEN_FENCE.exec(line);
      // A backtick fence's info string may not hold a backtick (CommonMark 4.5).
      if (o && !(o[2][0] === '`' && o[3].includes('`'))) open = { openStart: m.index, openLine: line, marker: o[2], contentStart: m.index + full.length };
      continue;
    }
    const c = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(line);
    if (c && c[1][0] === open.marker[0] && c[1].length >= open.marker.length) {
      fences.push({ ...open, closeStart: m.index, closeEnd: m.index + line.length });
      open = undefined;
    }
  }
  if (open) fences.push({ ...open, closeStart: text.length, closeEnd: text.length });
  return fences;
}

/**
 * Spans [start, end) no cut may fall strictly inside: character references (`&amp;`, `&#x1F600;`), Markdown links and
 * images, inline code spans, HTML tags and autolinks, and a code fence's opening and closing lines.
 */
const ATOMS = [
  /&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});/g,
  /!?\[[^\]\r\n]{0,500}\]\([^()\s]{0,2000}(?:\s+"[^"\r\n]{0,500}")?\)/g,
  /`[^`\r\n]{1,500}`/g,
  /<[^<>\r\n]{1,500}>/g,
];

function findAtoms(text: string, fences: Fence[]): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  for (const re of ATOMS) for (const m of text.matchAll(re)) spans.push([m.index, m.index + m[0].length]);
  for (const f of fences) {
    // Neither inside the opening line nor right after it (a chunk holding only an empty block).
    spans.push([f.openStart, Math.min(f.contentStart + 1, text.length)]);
    // Nor in the whitespace just before the closing line or inside it (a next chunk that only closes the block).
    let ws = f.closeStart;
    while (ws > f.contentStart && /\s/.test(text[ws - 1])) ws--;
    if (f.closeStart < text.length) spans.push([ws - 1, f.closeEnd]);
  }
  return spans;
}

type Kind = 0 | 1 | 2 | 3; // paragraph, line, sentence, word: the order of preference
const SENTENCE_END = /[.!?…。！？][)\]"'”’»]*$/;

const SEPARATOR = /[ \t]*(?:(?:\r\n|\r|\n)[ \t]*)*(?:\r\n|\r|\n)|[ \t]+/y;

/** The whitespace dropped at a cut at i: spaces, or spaces and line breaks up to the last break (keeping indentation). */
function separatorAt(text: string, i: number): string {
  SEPARATOR.lastIndex = i;
  return SEPARATOR.exec(text)?.[0] ?? '';
}

/** Splits text into pieces within limits (see ChunkPiece). */
export function chunkPieces(text: string, limits: ChunkLimits): ChunkPiece[] {
  const { max, unit } = limits;
  const maxLines = limits.maxLines ?? Infinity;
  const minUnit = unit === 'bytes' ? 4 : unit === 'utf16' ? 2 : 1;
  if (!(max >= minUnit)) throw new RangeError(`a chunk limit of ${max} ${unit} cannot hold one character`);
  if (!(maxLines >= 1)) throw new RangeError('a chunk must be allowed at least one line');

  const allFences = findFences(text);
  const fences = limits.fences === false ? [] : allFences;
  const inAtom = new Uint8Array(text.length + 1);
  for (const [s, e] of findAtoms(text, allFences)) inAtom.fill(1, s + 1, e);
  const forbidden = (p: number) => inAtom[p] === 1 || (text[p - 1] === '\r' && text[p] === '\n') || codePointWidth(text, p - 1) === 2;
  const fenceAt = (p: number) => fences.find((f) => f.contentStart <= p && p < f.closeStart);
  // A repair costs at most half a chunk, or the fence is left unrepaired (a tiny limit, a huge info string).
  const repairable = (f: Fence) => measure(f.openLine + '\n' + '\n' + f.marker, unit) <= max / 2 && maxLines >= 3;

  const contentEnd = text.length - (/\s*$/.exec(text)?.[0].length ?? 0);
  const pieces: ChunkPiece[] = [];
  if (contentEnd === 0) return text === '' ? [] : [{ open: '', body: '', close: '', separator: text }];
  let pos = 0;
  const lead = /^\s*(?:\r\n|\r|\n)/.exec(text);
  if (lead) {
    pieces.push({ open: '', body: '', close: '', separator: lead[0] });
    pos = lead[0].length;
  }
  let open = '';
  while (pos < contentEnd) {
    let reserve = 0;
    let reserveLines = 0;
    for (;;) {
      const budget = max - measure(open, unit) - reserve;
      const linesBudget = maxLines - (open ? 1 : 0) - reserveLines;
      if (budget < minUnit || linesBudget < 1) {
        // Cannot happen with repairable fences; kept so a pathological limit never loops.
        open = '';
        reserve = 0;
        reserveLines = 0;
        continue;
      }
      const end = furthest(text, pos, contentEnd, budget, linesBudget, unit);
      const cut = end >= contentEnd ? contentEnd : chooseCut(text, pos, end, allFences, forbidden);
      const fence = cut < contentEnd ? fenceAt(cut) : undefined;
      const close = fence && repairable(fence) ? '\n' + fence.marker : '';
      if (measure(close, unit) > reserve || (close ? 1 : 0) > reserveLines) {
        reserve = measure(close, unit);
        reserveLines = close ? 1 : 0;
        continue;
      }
      const separator = cut === contentEnd ? text.slice(contentEnd) : separatorAt(text, cut);
      pieces.push({ open, body: text.slice(pos, cut), close, separator });
      pos = cut + separator.length;
      open = close ? fence!.openLine + '\n' : '';
      break;
    }
  }
  return pieces;
}

/** The furthest index from pos whose slice fits budget units and linesBudget lines (at a code point boundary). */
function furthest(text: string, pos: number, limit: number, budget: number, linesBudget: number, unit: ChunkUnit): number {
  let used = 0;
  let lines = 1;
  let i = pos;
  while (i < limit) {
    const c = text[i];
    if (c === '\n' || (c === '\r' && text[i + 1] !== '\n')) {
      if (lines === linesBudget) return i;
      lines++;
    }
    const w = codePointWidth(text, i);
    const u = unitsOf(text, i, w, unit);
    if (used + u > budget) return i;
    used += u;
    i += w;
  }
  return i;
}

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** The best cut in (pos, end]: the preferred kind of boundary in the window's second half, else any boundary, else a hard cut. */
function chooseCut(text: string, pos: number, end: number, fences: Fence[], forbidden: (p: number) => boolean): number {
  const last: Array<number | undefined> = [undefined, undefined, undefined, undefined];
  for (let p = pos + 1; p <= end; p++) {
    const c = text[p];
    if (c !== ' ' && c !== '\t' && c !== '\n' && c !== '\r') continue;
    const prev = text[p - 1];
    if (prev === ' ' || prev === '\t' || prev === '\n' || prev === '\r' || forbidden(p)) continue;
    const sep = separatorAt(text, p);
    const breaks = sep.match(/\r\n|\r|\n/g)?.length ?? 0;
    const next = p + sep.length;
    const besideFence = fences.some((f) => f.openStart === next || f.closeEnd === p);
    const kind: Kind = breaks >= 2 || (besideFence && breaks > 0) ? 0 : breaks === 1 ? 1 : SENTENCE_END.test(text.slice(Math.max(pos, p - 8), p)) ? 2 : 3;
    last[kind] = p;
  }
  const half = pos + (end - pos) / 2;
  for (const p of last) if (p !== undefined && p >= half) return p;
  const any = Math.max(...last.map((p) => p ?? -1));
  if (any > pos) return any;
  return hardCut(text, pos, end, forbidden);
}

/** A cut at the last grapheme boundary at or before end that is outside every atom; inside one when nothing else fits. */
function hardCut(text: string, pos: number, end: number, forbidden: (p: number) => boolean): number {
  const bounds: number[] = [];
  for (const s of segmenter.segment(text.slice(pos, Math.min(text.length, end + 64)))) {
    const b = pos + s.index;
    if (b > end) break;
    if (b > pos) bounds.push(b);
  }
  for (let k = bounds.length - 1; k >= 0; k--) if (!forbidden(bounds[k])) return bounds[k];
  if (bounds.length > 0) return bounds[bounds.length - 1];
  // One grapheme longer than the whole budget: cut it at a code point boundary.
  return end > pos ? end : pos + codePointWidth(text, pos);
}
