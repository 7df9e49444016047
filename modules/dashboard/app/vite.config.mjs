// The one Vite configuration of the dashboard: scripts/build-dashboard.mjs builds with it and, under `npm run dev`,
// the dashboard module serves the app through Vite's dev server with it (modules/dashboard/services/dev-server.ts).
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('.', import.meta.url));

/** @type {import('vite').UserConfig} */
export default {
  root,
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
  },
};
