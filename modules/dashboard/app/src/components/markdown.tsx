/** Renders untrusted Markdown: the HTML comes only from renderMarkdown, which sanitises it. */
import { useMemo } from 'preact/hooks';
import { renderMarkdown } from '../lib/markdown.tsx';

export function Markdown({ text }: { text: string }) {
  const html = useMemo(() => renderMarkdown(text), [text]);
  return <div class="markdown" dangerouslySetInnerHTML={{ __html: html }} />;
}
