/**
 * Model output and tool results are untrusted: Markdown is rendered by marked, code blocks are highlighted once the
 * highlighter is there (lib/highlight.tsx, loaded on demand), and the HTML goes through DOMPurify before it reaches
 * the page. Links open in a new tab without a referrer or an opener.
 */
import { Marked } from 'marked';
import DOMPurify from 'dompurify';

type Highlighter = (code: string, lang: string) => string | undefined;
let highlighter: Highlighter | undefined;

/** Set once lib/highlight.tsx has loaded; messages rendered after it get highlighted code. */
export function setHighlighter(h: Highlighter): void {
  highlighter = h;
}

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const marked = new Marked({
  gfm: true,
  breaks: true,
  renderer: {
    code({ text, lang }) {
      const language = lang?.trim().split(/\s/)[0] ?? '';
      const html = (language && highlighter?.(text, language)) || escape(text);
      return `<pre><code class="hljs${language ? ` language-${escape(language)}` : ''}">${html}</code></pre>`;
    },
  },
});

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

/** Sanitised HTML for a Markdown text. */
export function renderMarkdown(text: string): string {
  const html = marked.parse(text, { async: false });
  return DOMPurify.sanitize(html, { USE_PROFILES: { html: true }, FORBID_TAGS: ['style', 'form', 'input', 'button'] });
}
