/**
 * Renders untrusted Markdown: the HTML comes only from renderMarkdown, which sanitises it. The renderer (marked and
 * DOMPurify) is its own chunk, loaded once the page is idle after the first messages are on screen — its set-up is
 * the largest piece of script work on a cold chat visit, and the conversation is readable and the box usable without
 * it. Until it is there a message shows as plain text (escaped by Preact). The highlighter is another chunk, loaded
 * the first time a text holds a fenced code block with a language; the block shows unhighlighted until then.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';

let render: ((text: string) => string) | undefined;
let loading: Promise<void> | undefined;
let highlighting: Promise<void> | undefined;
let highlighted = false;

export function loadMarkdown(): Promise<void> {
  return (loading ??= import('../lib/markdown.tsx').then((m) => void (render = m.renderMarkdown)));
}

/** Runs when the main thread is idle (at the latest after a short while), so it never delays a first screen. */
const whenIdle = (fn: () => void) => (typeof requestIdleCallback === 'function' ? requestIdleCallback(fn, { timeout: 300 }) : setTimeout(fn, 50));

function loadHighlighter(): Promise<void> {
  return (highlighting ??= Promise.all([import('../lib/markdown.tsx'), import('../lib/highlight.tsx')]).then(([md, hl]) => {
    md.setHighlighter(hl.highlight);
    highlighted = true;
  }));
}

const FENCED_WITH_LANGUAGE = /^\s{0,3}(```|~~~)[ \t]*\w/m;

export function Markdown({ text }: { text: string }) {
  const [ready, setReady] = useState(render !== undefined);
  const wantsHighlight = !highlighted && FENCED_WITH_LANGUAGE.test(text);
  const [, setHighlighted] = useState(highlighted);
  useEffect(() => {
    if (!ready) whenIdle(() => void loadMarkdown().then(() => setReady(true)));
  }, [ready]);
  useEffect(() => {
    if (wantsHighlight) void loadHighlighter().then(() => setHighlighted(true));
  }, [wantsHighlight]);
  const html = useMemo(() => render?.(text), [text, ready, highlighted]);
  if (html === undefined) return <div class="markdown plain">{text}</div>;
  return <div class="markdown" dangerouslySetInnerHTML={{ __html: html }} />;
}
