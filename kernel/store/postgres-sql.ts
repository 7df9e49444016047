/**
 * The store's statements are written with `?` placeholders (the portable subset); PostgreSQL numbers them (`$1`, `$2`).
 * A `?` inside a string, a quoted name, a dollar-quoted body or a comment is text, not a placeholder. (PostgreSQL's
 * jsonb operators `?`, `?|` and `?&` are therefore not writable through the store: use `jsonb_exists` and its kin.)
 */
export function numberPlaceholders(sql: string): string {
  let out = '';
  let n = 0;
  let i = 0;
  while (i < sql.length) {
    const end = skipQuoted(sql, i);
    if (end > i) {
      out += sql.slice(i, end);
      i = end;
    } else if (sql[i] === '?') {
      out += `$${++n}`;
      i++;
    } else {
      out += sql[i++];
    }
  }
  return out;
}

/** Where the quoted text or comment starting at `i` ends (just past it); `i` itself when none starts there. */
function skipQuoted(sql: string, i: number): number {
  const c = sql[i];
  const next = sql[i + 1];
  if (c === "'") return endOfString(sql, i + 1, isEscapeString(sql, i));
  if (c === '"') return endOfQuoted(sql, i + 1, '"');
  if (c === '-' && next === '-') return endOfLine(sql, i + 2);
  if (c === '/' && next === '*') return endOfBlockComment(sql, i + 2);
  if (c === '$') {
    const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i));
    // `$1` is a parameter, not a tag; a tag never follows a name character (`a$b$` is an identifier).
    if (tag && !/[A-Za-z0-9_]/.test(sql[i - 1] ?? '')) {
      const close = sql.indexOf(tag[0], i + tag[0].length);
      return close === -1 ? sql.length : close + tag[0].length;
    }
  }
  return i;
}

/** E'…' strings take backslash escapes; standard strings (standard_conforming_strings, the default) do not. */
function isEscapeString(sql: string, quote: number): boolean {
  const prefix = sql[quote - 1];
  return (prefix === 'E' || prefix === 'e') && !/[A-Za-z0-9_]/.test(sql[quote - 2] ?? '');
}

function endOfString(sql: string, from: number, backslashes: boolean): number {
  for (let i = from; i < sql.length; i++) {
    if (backslashes && sql[i] === '\\') i++;
    else if (sql[i] === "'") {
      if (sql[i + 1] === "'") i++;
      else return i + 1;
    }
  }
  return sql.length;
}

function endOfQuoted(sql: string, from: number, quote: string): number {
  for (let i = from; i < sql.length; i++) {
    if (sql[i] !== quote) continue;
    if (sql[i + 1] === quote) i++;
    else return i + 1;
  }
  return sql.length;
}

function endOfLine(sql: string, from: number): number {
  const nl = sql.indexOf('\n', from);
  return nl === -1 ? sql.length : nl + 1;
}

/** PostgreSQL's block comments nest. */
function endOfBlockComment(sql: string, from: number): number {
  let depth = 1;
  for (let i = from; i < sql.length - 1; i++) {
    if (sql[i] === '/' && sql[i + 1] === '*') {
      depth++;
      i++;
    } else if (sql[i] === '*' && sql[i + 1] === '/') {
      depth--;
      i++;
      if (depth === 0) return i + 1;
    }
  }
  return sql.length;
}
