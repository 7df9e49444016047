/**
 * Renders untrusted Markdown: the HTML comes only from renderMarkdown, which sanitises it. The renderer (marked,
 * highlight.js, DOMPurify) is its own chunk, fetched beside the chat's first requests rather than before them;
 * until it is there a message shows as plain text (escaped by Preact).
 */
import { useEffect, useMemo, useState } from 'preact/hooks';

let render: ((text: string) => string) | undefined;
let loading: Promise<void> | undefined;

export function loadMarkdown(): Promise<void> {
  return (loading ??= import('../lib/markdown.tsx').then((m) => void (render = m.renderMarkdown)));
}

export function Markdown({ text }: { text: string }) {
  const [ready, setReady] = useState(render !== undefined);
  useEffect(() => {
    if (!ready) void loadMarkdown().then(() => setReady(true));
  }, [ready]);
  const html = useMemo(() => render?.(text), [text, ready]);
  if (html === undefined) return <div class="markdown plain">{text}</div>;
  return <div class="markdown" dangerouslySetInnerHTML={{ __html: html }} />;
}
