/**
 * Telegram's parse_mode=HTML rules, as the Bot API documents them (core.telegram.org/bots/api#html-style): only the
 * listed tags, properly nested; `<` and `&` in text only as the entities &lt; &gt; &amp; &quot; or numeric ones.
 * Anything else is refused with the Bot API's own words ("can't parse entities: …"), so an adapter's plain-text retry
 * can be tested. Answers the text with the markup removed and the entities decoded, or the error description.
 */
const TAGS = new Set(['b', 'strong', 'i', 'em', 'u', 'ins', 's', 'strike', 'del', 'span', 'tg-spoiler', 'a', 'tg-emoji', 'code', 'pre', 'blockquote']);
const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"' };

export function parseTelegramHtml(html: string): { text: string } | { error: string } {
  const open: string[] = [];
  let text = '';
  let i = 0;
  const offset = () => Buffer.byteLength(html.slice(0, i), 'utf8');
  while (i < html.length) {
    const ch = html[i]!;
    if (ch === '<') {
      const end = html.indexOf('>', i);
      if (end < 0) return { error: `Bad Request: can't parse entities: Unclosed start tag at byte offset ${offset()}` };
      const inner = html.slice(i + 1, end);
      if (inner.startsWith('/')) {
        const name = inner.slice(1).trim().toLowerCase();
        if (open.at(-1) !== name) return { error: `Bad Request: can't parse entities: Unexpected end tag at byte offset ${offset()}` };
        open.pop();
      } else {
        const name = (/^[a-zA-Z-]+/.exec(inner)?.[0] ?? '').toLowerCase();
        if (!TAGS.has(name)) return { error: `Bad Request: can't parse entities: Unsupported start tag "${name || inner}" at byte offset ${offset()}` };
        if (name === 'span' && !/class\s*=\s*"tg-spoiler"/.test(inner)) {
          return { error: `Bad Request: can't parse entities: Tag "span" must have class "tg-spoiler" at byte offset ${offset()}` };
        }
        open.push(name);
      }
      i = end + 1;
    } else if (ch === '&') {
      const m = /^&(#\d+|#x[0-9a-fA-F]+|[a-zA-Z]+);/.exec(html.slice(i));
      const name = m?.[1];
      let decoded: string | undefined;
      if (name?.startsWith('#x')) decoded = String.fromCodePoint(parseInt(name.slice(2), 16));
      else if (name?.startsWith('#')) decoded = String.fromCodePoint(Number(name.slice(1)));
      else if (name) decoded = NAMED[name];
      if (decoded === undefined || !m) return { error: `Bad Request: can't parse entities: Can't find end of the entity starting at byte offset ${offset()}` };
      text += decoded;
      i += m[0].length;
    } else {
      // A bare '>' in text is taken as is by the real API, though the docs ask for &gt;.
      text += ch;
      i++;
    }
  }
  if (open.length) return { error: `Bad Request: can't parse entities: Can't find end tag corresponding to start tag "${open.at(-1)}"` };
  return { text };
}
