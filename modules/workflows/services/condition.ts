/**
 * The condition grammar of `conditional` steps, evaluated over the previous step's output — never `eval`:
 *   condition := alternative ( '||' alternative )*        any alternative holds
 *   alternative := term ( '&&' term )*                    every term holds
 *   term := '!'* text                                     text occurs in the output (case-insensitive); each '!' negates
 * Operators inside double quotes are text, and double quotes around a whole term are removed (`"a || b"` looks for
 * the text `a || b`); single quotes are plain text (apostrophes). Blank parts are ignored; a blank condition holds.
 */
export function holds(condition: string, output: string): boolean {
  const text = output.toLowerCase();
  const alternatives = split(condition, '||').filter((a) => a.trim());
  if (!alternatives.length) return true;
  return alternatives.some((alt) =>
    split(alt, '&&')
      .filter((t) => t.trim())
      .every((term) => evaluate(term, text)),
  );
}

function evaluate(term: string, text: string): boolean {
  let t = term.trim();
  let negate = false;
  while (t.startsWith('!')) {
    negate = !negate;
    t = t.slice(1).trimStart();
  }
  if (t.length >= 2 && t.startsWith('"') && t.endsWith('"')) t = t.slice(1, -1);
  return text.includes(t.toLowerCase()) !== negate;
}

/** Splits on an operator outside quotes. */
function split(s: string, op: string): string[] {
  const parts: string[] = [];
  let quoted = false;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '"') quoted = !quoted;
    else if (!quoted && s.startsWith(op, i)) {
      parts.push(s.slice(start, i));
      start = i + op.length;
      i += op.length - 1;
    }
  }
  parts.push(s.slice(start));
  return parts;
}
