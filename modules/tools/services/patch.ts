/**
 * The apply_patch format, as the reference system defines it:
 *
 *   *** Begin Patch
 *   *** Add File: path        (then lines starting with '+')
 *   *** Update File: path     (or 'old -> new' to move; then '@@' hunks)
 *   *** Delete File: path
 *   *** End Patch
 *
 * Parsing and applying a hunk to text are pure; the tool does the file I/O.
 */

export interface Hunk {
  contextBefore: string[];
  oldLines: string[];
  newLines: string[];
  /** Parsed for completeness; like the reference, never used to anchor. */
  contextAfter: string[];
}

export type PatchOp =
  { kind: 'add'; path: string; content: string } | { kind: 'delete'; path: string } | { kind: 'update'; path: string; moveTo?: string; hunks: Hunk[] };

export class PatchError extends Error {
  override name = 'PatchError';
}

const BEGIN = '*** Begin Patch';
const END = '*** End Patch';
const ADD = '*** Add File:';
const UPDATE = '*** Update File:';
const DELETE = '*** Delete File:';
const MOVE_TO = '*** Move to:';
const END_OF_FILE = '*** End of File';

const isOpHeader = (line: string) => [ADD, UPDATE, DELETE].some((h) => line.trimStart().startsWith(h));

export function parsePatch(patch: string): PatchOp[] {
  const lines = patch.replace(/\r\n/g, '\n').split('\n');
  const begin = lines.findIndex((l) => l.trim() === BEGIN);
  if (begin < 0) throw new PatchError(`Missing '${BEGIN}' marker`);
  let end = -1;
  for (let i = lines.length - 1; i > begin; i--) {
    if (lines[i].trim() === END) {
      end = i;
      break;
    }
  }
  if (end < 0) throw new PatchError(`Missing '${END}' marker`);
  const body = lines.slice(begin + 1, end);
  const ops: PatchOp[] = [];
  let i = 0;
  const takePath = (line: string, header: string) => {
    const p = line.trimStart().slice(header.length).trim();
    if (!p) throw new PatchError(`Empty path in ${header.slice(4, -1)}`);
    return p;
  };
  while (i < body.length) {
    const line = body[i];
    const trimmed = line.trimStart();
    if (line.trim() === '') {
      i++;
    } else if (trimmed.startsWith(ADD)) {
      const path = takePath(line, ADD);
      const content: string[] = [];
      i++;
      while (i < body.length && !isOpHeader(body[i])) {
        const l = body[i];
        if (l.startsWith('+')) content.push(l.slice(1));
        else if (l.trim() === '' && body.slice(i).every((rest) => rest.trim() === '' || isOpHeader(rest))) {
          // blank lines between this file and the next header (or the end) are layout, not content
        } else throw new PatchError(`Expected '+' prefix in Add File content, got: ${l}`);
        i++;
      }
      ops.push({ kind: 'add', path, content: content.join('\n') });
    } else if (trimmed.startsWith(DELETE)) {
      ops.push({ kind: 'delete', path: takePath(line, DELETE) });
      i++;
    } else if (trimmed.startsWith(UPDATE)) {
      const spec = takePath(line, UPDATE);
      const arrow = spec.indexOf(' -> ');
      const path = arrow >= 0 ? spec.slice(0, arrow).trim() : spec;
      let moveTo = arrow >= 0 ? spec.slice(arrow + 4).trim() : undefined;
      if (!path || moveTo === '') throw new PatchError(`Empty path in Update File`);
      i++;
      if (i < body.length && body[i].trimStart().startsWith(MOVE_TO)) {
        moveTo = takePath(body[i], MOVE_TO);
        i++;
      }
      const hunks: Hunk[] = [];
      let current: string[] | undefined;
      const flush = () => {
        if (current) hunks.push(toHunk(current));
        current = undefined;
      };
      while (i < body.length && !isOpHeader(body[i])) {
        const l = body[i];
        if (l.startsWith('@@')) {
          flush();
          current = [];
        } else if (current) {
          if (l.trim() !== END_OF_FILE) current.push(l);
        } else if (l.trim() !== '') {
          throw new PatchError(`Unexpected line in patch: ${l}`);
        }
        i++;
      }
      flush();
      if (!hunks.length) throw new PatchError(`Update File '${path}' has no hunks`);
      ops.push({ kind: 'update', path, moveTo, hunks });
    } else {
      throw new PatchError(`Unexpected line in patch: ${line}`);
    }
  }
  if (!ops.length) throw new PatchError('Patch contains no operations');
  return ops;
}

/** '-' old, '+' new, ' ' context, blank = empty context, anything else = context. */
function toHunk(lines: string[]): Hunk {
  // Trailing blank lines are the gap before the next hunk or header, not context.
  while (lines.length && lines[lines.length - 1].trim() === '') lines.pop();
  const hunk: Hunk = { contextBefore: [], oldLines: [], newLines: [], contextAfter: [] };
  let changed = false;
  let pending: string[] = [];
  for (const l of lines) {
    const tag = l[0];
    if (tag === '-' || tag === '+') {
      if (changed) {
        hunk.oldLines.push(...pending);
        hunk.newLines.push(...pending);
      }
      pending = [];
      changed = true;
      (tag === '-' ? hunk.oldLines : hunk.newLines).push(l.slice(1));
    } else {
      const text = tag === ' ' ? l.slice(1) : l;
      if (changed) pending.push(text);
      else hunk.contextBefore.push(text);
    }
  }
  hunk.contextAfter = pending;
  return hunk;
}

/** Applies hunks in order; throws PatchError naming the first hunk that does not fit. Keeps the trailing newline. */
export function applyHunks(original: string, hunks: Hunk[]): string {
  const trailingNewline = original.endsWith('\n');
  const lines = original.length === 0 ? [] : (trailingNewline ? original.slice(0, -1) : original).split('\n');
  let cursor = 0;
  hunks.forEach((hunk, index) => {
    const anchor = [...hunk.contextBefore, ...hunk.oldLines];
    const replacement = [...hunk.contextBefore, ...hunk.newLines];
    if (anchor.length === 0) {
      lines.push(...replacement);
      cursor = lines.length;
      return;
    }
    const at = find(lines, anchor, cursor) ?? find(lines, anchor, 0);
    if (at === undefined) throw new PatchError(`Hunk ${index + 1} failed: could not find context/old lines in file`);
    lines.splice(at, anchor.length, ...replacement);
    cursor = at + replacement.length;
  });
  const text = lines.join('\n');
  return trailingNewline ? `${text}\n` : text;
}

/** Exact match first, then with trailing whitespace ignored; the first match wins. */
function find(lines: string[], needle: string[], from: number): number | undefined {
  for (const same of [(a: string, b: string) => a === b, (a: string, b: string) => a.trimEnd() === b.trimEnd()]) {
    for (let i = from; i + needle.length <= lines.length; i++) {
      if (needle.every((n, j) => same(lines[i + j], n))) return i;
    }
  }
  return undefined;
}
