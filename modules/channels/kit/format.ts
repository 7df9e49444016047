/**
 * Renders the model's Markdown in a platform's format: Telegram HTML, Slack mrkdwn or plain text. The model's output
 * is untrusted (a prompt injection can make it write anything), so the Markdown is parsed with marked's lexer and only
 * the constructs each format is given below are produced: raw HTML comes out as visible, escaped text, links keep
 * only the schemes allowed, and entity references are decoded exactly once before escaping, so nothing the model
 * writes can become markup, a script link or a platform mention.
 */
import { Lexer, type Token, type Tokens } from 'marked';

/** The formats an adapter's chunks are rendered to (`markdown`: the platform renders Markdown itself, as Discord). */
export type ReplyFormat = 'plain' | 'markdown' | 'telegram_html' | 'slack_mrkdwn';

/** How one format writes each construct; the walker below is shared. */
interface Dialect {
  /** Link schemes kept; a link with another scheme (javascript:, data:, file:, a relative path) keeps its text only. */
  schemes: ReadonlySet<string>;
  bullet: string;
  text(s: string): string;
  strong(inner: string): string;
  em(inner: string): string;
  del(inner: string): string;
  codespan(code: string): string;
  code(code: string, lang: string | undefined): string;
  heading(inner: string): string;
  blockquote(inner: string, nested: boolean): string;
  /** href is absent when the scheme is not allowed. */
  link(href: string | undefined, inner: string, label: string): string;
}

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const escapeSlack = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
/** Info strings become a class name only when they look like a language name. */
const LANGUAGE = /^[A-Za-z0-9_+#.-]{1,32}$/;
const quoteLines = (s: string, marker = '>') =>
  s
    .split('\n')
    .map((l) => (l ? `${marker} ${l}` : marker))
    .join('\n');
/** A link whose text is its address (an autolink) is written once. */
const sameAsHref = (label: string, href: string) => label === href || `mailto:${label}` === href || `${label}/` === href;

/** The subset Telegram accepts with parse_mode HTML: b, i, s, code, pre (with a language), a href, blockquote. */
const telegram: Dialect = {
  schemes: new Set(['http:', 'https:', 'mailto:', 'tg:']),
  bullet: '•',
  text: escapeHtml,
  strong: (s) => `<b>${s}</b>`,
  em: (s) => `<i>${s}</i>`,
  del: (s) => `<s>${s}</s>`,
  codespan: (c) => `<code>${escapeHtml(c)}</code>`,
  code: (c, lang) => (lang ? `<pre><code class="language-${lang}">${escapeHtml(c)}</code></pre>` : `<pre>${escapeHtml(c)}</pre>`),
  heading: (s) => `<b>${s}</b>`,
  // Telegram refuses a blockquote inside a blockquote: an inner one is marked with '>' instead.
  blockquote: (s, nested) => (nested ? quoteLines(s, '&gt;') : `<blockquote>${s}</blockquote>`),
  link: (href, inner) => (href ? `<a href="${escapeHtml(href)}">${inner}</a>` : inner),
};

/** Slack's mrkdwn: &, < and > escaped everywhere (they start Slack's own links and mentions), links as <url|text>. */
const slack: Dialect = {
  schemes: new Set(['http:', 'https:', 'mailto:']),
  bullet: '•',
  text: escapeSlack,
  strong: (s) => `*${s}*`,
  em: (s) => `_${s}_`,
  del: (s) => `~${s}~`,
  codespan: (c) => `\`${escapeSlack(c)}\``,
  code: (c) => `\`\`\`\n${escapeSlack(c)}\n\`\`\``,
  heading: (s) => `*${s}*`,
  blockquote: (s) => quoteLines(s),
  link: (href, inner, label) => {
    if (!href) return inner;
    const url = escapeSlack(href).replace(/\|/g, '%7C');
    return sameAsHref(label, href) ? `<${url}>` : `<${url}|${inner}>`;
  },
};

/** Plain text for IRC, SMS and e-mail bodies: links as `text (url)`. */
const plain: Dialect = {
  schemes: new Set(['http:', 'https:', 'mailto:']),
  bullet: '-',
  text: (s) => s,
  strong: (s) => s,
  em: (s) => s,
  del: (s) => s,
  codespan: (c) => c,
  code: (c) => c,
  heading: (s) => s,
  blockquote: (s) => quoteLines(s),
  link: (href, inner, label) => (!href || sameAsHref(label, href) ? (href ?? inner) : `${inner} (${href})`),
};

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };
/** C0 and C1 controls but tab and newline: IRC formatting codes, CR (a second IRC command), NUL. */
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * Decodes character references once (`&amp;lt;` becomes the text `&lt;`, which is then escaped again). Named ones
 * beyond the XML five and nbsp stay as written; a reference to a control character is dropped.
 */
function decodeEntities(s: string): string {
  return s.replace(/&(?:#([0-9]{1,7})|#[xX]([0-9a-fA-F]{1,6})|([A-Za-z][A-Za-z0-9]{1,31}));/g, (whole, dec?: string, hex?: string, name?: string) => {
    if (name !== undefined) return NAMED[name] ?? whole;
    const cp = dec !== undefined ? Number(dec) : parseInt(hex!, 16);
    if (cp === 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return '\ufffd';
    const ch = String.fromCodePoint(cp);
    return ch.replace(CONTROLS, '');
  });
}

/** The href kept for a link, normalised by the URL parser (which also strips the tabs and newlines of `java\tscript:`). */
function safeHref(raw: string, d: Dialect): string | undefined {
  try {
    const url = new URL(decodeEntities(raw).trim());
    return d.schemes.has(url.protocol) ? url.href : undefined;
  } catch {
    return undefined; // relative or malformed: nothing to link to
  }
}

function inline(tokens: Token[] | undefined, d: Dialect): string {
  return (tokens ?? []).map((t) => inlineToken(t, d)).join('');
}

function inlineToken(t: Token, d: Dialect): string {
  switch (t.type) {
    case 'text':
      // The source, not marked's text: marked decodes numeric references itself, and decoding twice would turn
      // `&#38;lt;` into `<` rather than the text `&lt;`.
      return 'tokens' in t && t.tokens?.length ? inline(t.tokens, d) : d.text(decodeEntities(t.raw));
    case 'escape':
      return d.text(t.text);
    case 'strong':
      return d.strong(inline(t.tokens, d));
    case 'em':
      return d.em(inline(t.tokens, d));
    case 'del':
      return d.del(inline(t.tokens, d));
    case 'codespan':
      return d.codespan(t.text);
    case 'br':
      return '\n';
    case 'link': {
      const l = t as Tokens.Link;
      return d.link(safeHref(l.href, d), inline(l.tokens, d), decodeEntities(l.text));
    }
    case 'image': {
      const img = t as Tokens.Image;
      const alt = decodeEntities(img.text);
      return d.link(safeHref(img.href, d), d.text(alt || 'image'), alt);
    }
    default:
      // Raw HTML and anything this walker does not know is shown as the text that was written.
      return d.text('raw' in t && typeof t.raw === 'string' ? t.raw : '');
  }
}

const indent = (s: string, by: string) => s.replace(/\n/g, `\n${by}`);

function list(l: Tokens.List, d: Dialect, quoted: boolean): string {
  const start = typeof l.start === 'number' ? l.start : 1;
  return l.items
    .map((item, i) => {
      const marker = l.ordered ? `${start + i}.` : d.bullet;
      const box = item.task ? (item.checked ? '☑ ' : '☐ ') : '';
      const body = blocks(
        item.tokens.filter((t) => t.type !== 'checkbox'),
        d,
        quoted,
        '\n',
      );
      return `${marker} ${box}${indent(body, ' '.repeat(marker.length + 1))}`;
    })
    .join('\n');
}

function table(t: Tokens.Table, d: Dialect): string {
  const row = (cells: Tokens.TableCell[]) => cells.map((c) => inline(c.tokens, plain)).join(' | ');
  const text = [row(t.header), ...t.rows.map(row)].join('\n');
  return d.code(text, undefined);
}

function block(t: Token, d: Dialect, quoted: boolean): string {
  switch (t.type) {
    case 'paragraph':
      return inline(t.tokens, d);
    case 'text':
      return inlineToken(t, d);
    case 'heading':
      return d.heading(inline(t.tokens, d));
    case 'code': {
      const lang = (t as Tokens.Code).lang?.trim().split(/\s+/)[0];
      return d.code(t.text, lang && LANGUAGE.test(lang) ? lang : undefined);
    }
    case 'blockquote':
      return d.blockquote(blocks(t.tokens ?? [], d, true, '\n\n'), quoted);
    case 'list':
      return list(t as Tokens.List, d, quoted);
    case 'table':
      return table(t as Tokens.Table, d);
    case 'hr':
      return '———';
    case 'space':
    case 'def':
      return '';
    default:
      return d.text(('raw' in t && typeof t.raw === 'string' ? t.raw : '').trimEnd());
  }
}

function blocks(tokens: Token[], d: Dialect, quoted: boolean, joiner: string): string {
  return tokens
    .map((t) => block(t, d, quoted))
    .filter((s) => s !== '')
    .join(joiner);
}

function render(markdown: string, d: Dialect): string {
  const source = markdown.replace(/\r\n?/g, '\n').replace(CONTROLS, '');
  return blocks(new Lexer({ gfm: true }).lex(source), d, false, '\n\n');
}

/** Markdown → Telegram HTML (parse_mode "HTML"). */
export const toTelegramHtml = (markdown: string): string => render(markdown, telegram);
/** Markdown → Slack mrkdwn. */
export const toSlackMrkdwn = (markdown: string): string => render(markdown, slack);
/** Markdown → plain text (IRC, SMS, e-mail text; Telegram's retry when it refuses the HTML). */
export const toPlainText = (markdown: string): string => render(markdown, plain);

/** Markdown in the format an adapter declares; `markdown` passes it through with control characters removed. */
export function formatReply(markdown: string, format: ReplyFormat): string {
  if (format === 'telegram_html') return toTelegramHtml(markdown);
  if (format === 'slack_mrkdwn') return toSlackMrkdwn(markdown);
  if (format === 'plain') return toPlainText(markdown);
  return markdown.replace(/\r\n?/g, '\n').replace(CONTROLS, '');
}
