/**
 * Renders untrusted Markdown: the HTML comes only from renderMarkdown, which sanitises it. The renderer (marked and
 * DOMPurify) is its own chunk, loaded once the first messages have been painted — its set-up is the largest piece of
 * script work on a cold chat visit, and the conversation is readable and the box usable without it. The chat starts
 * the load right after that paint (loadMarkdown); a Markdown text starts it itself after a second otherwise. Until it
 * is there a message shows as plain text (escaped by Preact). The highlighter is another chunk, loaded the first time
 * a text holds a fenced code block with a language; the block shows unhighlighted until then.
 */
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';

let render: ((text: string) => string) | undefined;
let loading: Promise<void> | undefined;
let highlighting: Promise<void> | undefined;
let highlighted = false;

/** Settles when the renderer is there, whoever started loading it. */
let rendererLoaded: () => void;
const rendererThere = new Promise<void>((resolve) => (rendererLoaded = resolve));

export function loadMarkdown(): Promise<void> {
  return (loading ??= import('../lib/markdown.tsx').then((m) => {
    render = m.renderMarkdown;
    rendererLoaded();
  }));
}

/** When no view has started the renderer, a text waits this long for it before starting it. */
const UNLESS_STARTED_MS = 1000;

function loadHighlighter(): Promise<void> {
  // After the renderer (never ahead of it, which would load the renderer early too).
  return (highlighting ??= rendererThere
    .then(() => Promise.all([import('../lib/markdown.tsx'), import('../lib/highlight.tsx')]))
    .then(([md, hl]) => {
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
    if (ready) return;
    const timer = loading ? undefined : setTimeout(() => void loadMarkdown(), UNLESS_STARTED_MS);
    void rendererThere.then(() => setReady(true));
    return () => clearTimeout(timer);
  }, [ready]);
  useEffect(() => {
    if (wantsHighlight) void loadHighlighter().then(() => setHighlighted(true));
  }, [wantsHighlight]);
  const html = useMemo(() => render?.(text), [text, ready, highlighted]);
  const box = useRef<HTMLDivElement>(null);
  // Each code block gets a copy button. Made here, after sanitising (which lets no button through), and again
  // whenever the HTML is replaced.
  useLayoutEffect(() => {
    for (const pre of box.current?.querySelectorAll('pre') ?? []) {
      const button = document.createElement('button');
      button.type = 'button';
      button.className = 'copy-code small';
      button.textContent = 'Copy code';
      pre.prepend(button);
    }
  }, [html]);
  if (html === undefined) return <div class="markdown plain">{text}</div>;
  return <div class="markdown" ref={box} onClick={copyCode} dangerouslySetInnerHTML={{ __html: html }} />;
}

/** A click on a code block's copy button copies the block's code (the button's label says how it went). */
function copyCode(event: MouseEvent): void {
  const button = (event.target as Element).closest('button.copy-code');
  const code = button?.parentElement?.querySelector('code')?.textContent;
  if (!button || code === undefined || code === null) return;
  const say = (label: string) => {
    button.textContent = label;
    setTimeout(() => (button.textContent = 'Copy code'), 2000);
  };
  navigator.clipboard.writeText(code).then(
    () => say('Copied'),
    () => say('Copy failed'),
  );
}
