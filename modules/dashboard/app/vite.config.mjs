// The one Vite configuration of the dashboard: scripts/build-dashboard.mjs builds with it and, under `npm run dev`,
// the dashboard module serves the app through Vite's dev server with it (modules/dashboard/services/dev-server.ts).
// The shell is this folder; the views come from the modules: each module folder given declares its views in
// module.toml ([contributes.dashboard]) and keeps their files in its dashboard/ folder (docs/modules.md, Dashboard views).
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { dashboardStamp, declaredViews } from '../services/view-declarations.mjs';

const root = fileURLToPath(new URL('.', import.meta.url));
const modulesDir = path.resolve(root, '../..');

/** The built-in module folders (modules/<name>): their views are always built. */
export function builtInModuleDirs() {
  return readdirSync(modulesDir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && existsSync(path.join(modulesDir, e.name, 'module.toml')))
    .map((e) => path.join(modulesDir, e.name));
}

const VIEWS_ID = 'virtual:talon-views';

/**
 * The views of the given module folders, as the shell imports them (`virtual:talon-views`, app/src/lib/views.tsx):
 * each a lazy import, so each view is its own chunk, fetched when its route is first opened. The build also writes
 * views.json: the views it holds and a stamp of each module's dashboard/ folder, which the service compares with the
 * running modules (services/coverage.ts).
 * @returns {import('vite').Plugin}
 */
function talonViews(views) {
  return {
    name: 'talon-views',
    resolveId: (id) => (id === VIEWS_ID ? `\0${VIEWS_ID}` : undefined),
    load(id) {
      if (id !== `\0${VIEWS_ID}`) return undefined;
      const rows = views.map((v) => {
        const reads = { firstReads: v.first_reads ?? [], firstReadsWithParam: v.first_reads_with_param ?? [] };
        const data = JSON.stringify({ module: v.module, id: v.id, order: v.order, landing: v.landing === true, ...reads }).slice(0, -1);
        return `${data},load:()=>import(${JSON.stringify(v.file)})}`;
      });
      return `export default [${rows.join(',\n')}];\n`;
    },
    generateBundle() {
      const stamps = Object.fromEntries(views.map((v) => [v.module, dashboardStamp(v.dir)]));
      const manifest = { views: views.map((v) => ({ module: v.module, id: v.id })), stamps };
      this.emitFile({ type: 'asset', fileName: 'views.json', source: JSON.stringify(manifest, null, 1) });
    },
  };
}

/**
 * The views declared `preload` (the chat, the view a visit opens on): their chunks are fetched in parallel with the
 * entry, through <link rel="modulepreload"> tags, instead of after the entry has run. (The Markdown renderer is not:
 * it is loaded when the page is idle, see app/src/components/markdown.tsx.)
 * @returns {import('vite').Plugin}
 */
function preloadViews(views) {
  const files = new Set(views.filter((v) => v.preload).map((v) => v.file.split(path.sep).join('/')));
  return {
    name: 'talon-preload-views',
    apply: 'build',
    transformIndexHtml: {
      order: 'post',
      handler(_html, ctx) {
        const all = Object.values(ctx.bundle ?? {});
        const chunks = all.filter((c) => c.type === 'chunk' && files.has(c.facadeModuleId ?? ''));
        // The entry and what it imports are already there (Vite preloads the entry's imports itself).
        const entries = new Set(all.flatMap((c) => (c.type === 'chunk' && c.isEntry ? [c.fileName, ...c.imports] : [])));
        const wanted = new Set(chunks.flatMap((c) => [c.fileName, ...c.imports]).filter((f) => !entries.has(f)));
        return [...wanted].map((file) => ({ tag: 'link', attrs: { rel: 'modulepreload', crossorigin: '', href: `/${file}` }, injectTo: 'head' }));
      },
    },
  };
}

/**
 * The configuration for the built-in modules and, for third-party ones, their folders (`extraModuleDirs`).
 * @param {{ extraModuleDirs?: string[] }} [options]
 * @returns {import('vite').UserConfig}
 */
export function dashboardConfig({ extraModuleDirs = [] } = {}) {
  const dirs = [...builtInModuleDirs(), ...extraModuleDirs];
  const views = dirs.flatMap(declaredViews);
  return {
    root,
    plugins: [talonViews(views), preloadViews(views)],
    base: '/',
    publicDir: false,
    clearScreen: false,
    resolve: {
      // Views import the shell's API client and shared components through this one name, never by a path.
      alias: { '@talon/dashboard-kit': path.join(root, 'src', 'kit.ts') },
      // One Preact for the shell and every view, wherever a module's folder lies (a third party's has none of its own).
      dedupe: ['preact'],
    },
    // JSX compiles to Preact's automatic runtime (no React, no eval, no inline script).
    oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
    // The dev server serves module folders' views too (by /@fs/ paths).
    server: { fs: { allow: [root, ...dirs.map((d) => path.join(d, 'dashboard'))] } },
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
}

export default dashboardConfig();
