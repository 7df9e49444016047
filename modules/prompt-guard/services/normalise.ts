/**
 * What the rules read: the text folded so the cheap evasions stop working — compatibility forms (full-width
 * letters) folded by NFKC, invisible characters dropped (a zero-width space inside "ig​nore"), Unicode tag
 * characters read as the ASCII they hide, common Cyrillic and Greek look-alikes mapped to Latin, lower case.
 * Line breaks are kept so findings can name their line.
 */

/** Look-alike letters seen in homoglyph attacks → the Latin letter they imitate. */
const CONFUSABLES: Record<string, string> = {
  а: 'a',
  е: 'e',
  о: 'o',
  р: 'p',
  с: 'c',
  у: 'y',
  х: 'x',
  і: 'i',
  ј: 'j',
  ѕ: 's',
  ԁ: 'd',
  һ: 'h',
  ӏ: 'l',
  ԛ: 'q',
  ԝ: 'w',
  α: 'a',
  ε: 'e',
  ο: 'o',
  ρ: 'p',
  ν: 'v',
  ι: 'i',
  κ: 'k',
  τ: 't',
  υ: 'u',
  χ: 'x',
  ɡ: 'g',
  ı: 'i',
};
const CONFUSABLE_RE = new RegExp(`[${Object.keys(CONFUSABLES).join('')}]`, 'g');

const TAG_RE = /[\u{E0020}-\u{E007E}]/gu;

/** A global, unicode regex matching one code point of any of the ranges (the code-point rules' lists). */
export function invisibleMatcher(ranges: ReadonlyArray<readonly [number, number]>): RegExp {
  const hex = (cp: number) => `\\u{${cp.toString(16)}}`;
  return new RegExp(`[${ranges.map(([lo, hi]) => (lo === hi ? hex(lo) : `${hex(lo)}-${hex(hi)}`)).join('')}]`, 'gu');
}

export interface Normalised {
  text: string;
  /** Code points that were removed or decoded, for the code-point rules. */
  hidden: number[];
}

/** `invisible` (from invisibleMatcher) says which code points are removed and reported. */
export function normalise(input: string, invisible: RegExp): Normalised {
  const hidden: number[] = [];
  let text = input;
  // eslint-disable-next-line no-control-regex
  const ascii = !/[^\x00-\x7F]/.test(text);
  if (!ascii) {
    for (const m of text.matchAll(invisible)) hidden.push(m[0].codePointAt(0)!);
    // Tag characters carry ASCII (U+E0020..E007E): read it, drop the rest.
    if (hidden.length) text = text.replace(TAG_RE, (m) => String.fromCharCode(m.codePointAt(0)! - 0xe0000)).replace(invisible, '');
  }
  // NFKC is the slow step: ASCII-only text (the common case) is already in normal form.
  if (!ascii) text = text.normalize('NFKC').replace(CONFUSABLE_RE, (c) => CONFUSABLES[c] ?? c);
  return { text: text.toLowerCase(), hidden };
}
