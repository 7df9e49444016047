// The one Vite configuration of the dashboard: scripts/build-dashboard.mjs builds with it and, under `npm run dev`,
// the dashboard module serves the app through Vite's dev server with it (modules/dashboard/services/dev-server.ts).
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('.', import.meta.url));

/**
 * The chat is the view a visit opens on: its chunk is fetched in parallel with the entry, through
 * <link rel="modulepreload"> tags, instead of after the entry has run. (The Markdown renderer is not: it is loaded
 * when the page is idle, see app/src/components/markdown.tsx.)
 * @type {import('vite').Plugin}
 */
const preloadChat = {
  name: 'talon-preload-chat',
  apply: 'build',
  transformIndexHtml: {
    order: 'post',
    handler(_html, ctx) {
      const chunks = Object.values(ctx.bundle ?? {}).filter((c) => c.type === 'chunk' && /views\/chat\.tsx$/.test(c.facadeModuleId ?? ''));
      // The entry and what it imports are already there (Vite preloads the entry's imports itself).
      const entries = new Set(Object.values(ctx.bundle ?? {}).flatMap((c) => (c.type === 'chunk' && c.isEntry ? [c.fileName, ...c.imports] : [])));
      const files = new Set(chunks.flatMap((c) => [c.fileName, ...c.imports]).filter((f) => !entries.has(f)));
      return [...files].map((file) => ({ tag: 'link', attrs: { rel: 'modulepreload', crossorigin: '', href: `/${file}` }, injectTo: 'head' }));
    },
  },
};

/** @type {import('vite').UserConfig} */
export default {
  root,
  plugins: [preloadChat],
  base: '/',
  publicDir: false,
  clearScreen: false,
  // JSX compiles to Preact's automatic runtime (no React, no eval, no inline script).
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // Vite's module preload polyfill is an inline-free script, but modern browsers need none.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    reportCompressedSize: false,
    chunkSizeWarningLimit: 200,
    // The small helpers every view uses, and the agent chooser of the chat and the forms, go in one chunk instead of
    // one tiny chunk each: a first visit fetches and instantiates three scripts (entry, helpers, the chat).
    rolldownOptions: {
      output: {
        codeSplitting: {
          groups: [
            {
              name: 'shared',
              test: /\/src\/(lib\/(api|use-api|format|hash|sse|modules|download|agents)|components\/(pager|action|error|table|agent-picker))\.tsx$/,
            },
          ],
        },
      },
    },
  },
};
