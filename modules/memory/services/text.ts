/** Word-level text helpers shared by search (FTS5 queries) and duplicate detection. */

const STOPWORDS = new Set(
  (
    'a an and are as at be but by do does did for from has have had he her his i if in into is it its me my of on or our she so ' +
    'that the their them they this to was we were what when where which who why will with you your about can could should would ' +
    'there here than then these those am been being how any all not no just also very'
  ).split(' '),
);

/** Lower-case words (letters and digits, any script), stop words removed, in order, unique. */
export function keywords(text: string, max = 32): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (STOPWORDS.has(word) || seen.has(word)) continue;
    seen.add(word);
    out.push(word);
    if (out.length >= max) break;
  }
  return out;
}

/** A crude stem so "editors" and "editor" compare equal in duplicate detection (FTS5 has its own porter stemmer). */
const stem = (word: string): string => (word.length > 4 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word);

export function wordSet(text: string): Set<string> {
  return new Set(keywords(text, 512).map(stem));
}

export function jaccard(a: Set<string>, b: Set<string>): number {
  if (!a.size && !b.size) return 1;
  let shared = 0;
  for (const w of a) if (b.has(w)) shared++;
  return shared / (a.size + b.size - shared);
}

/** An FTS5 MATCH expression: any of the keywords (BM25 ranks entries with more and rarer ones first). */
export function ftsQuery(words: string[]): string {
  return words.map((w) => `"${w.replace(/"/g, '""')}"`).join(' OR ');
}

/** Share of query words found in the text (prefix match stands in for stemming). */
export function coverage(words: string[], text: string): number {
  if (!words.length) return 0;
  const lower = text.toLowerCase();
  let found = 0;
  for (const w of words) if (lower.includes(w.length > 4 ? w.slice(0, w.length - 2) : w)) found++;
  return found / words.length;
}
