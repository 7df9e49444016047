/**
 * `npm run dev`: the app is served through Vite's dev server in middleware mode, on the service's own port and
 * under its own headers, so the page a developer edits is the page users get (same origin, same CSP, same auth).
 * Edits reload the page (Vite's client over its own WebSocket port). The app's sources are .tsx/.css files,
 * which the kernel's module watcher ignores, so an edit to the app does not reload the module itself.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ViteDevServer, UserConfig } from 'vite';

/** `extraModuleDirs`: the running third-party modules that declare views (the built-in ones are always in). */
export async function startDevServer(appDir: string, extraModuleDirs: string[]): Promise<ViteDevServer> {
  const { createServer } = await import('vite');
  const { dashboardConfig } = (await import(pathToFileURL(path.join(appDir, 'vite.config.mjs')).href)) as {
    dashboardConfig: (options: { extraModuleDirs: string[] }) => UserConfig;
  };
  const config = dashboardConfig({ extraModuleDirs });
  // Vite serves files by path (/@fs/...): only the app, the modules' views and the installed packages.
  const allow = [...(config.server?.fs?.allow ?? []), path.resolve(appDir, '..', '..', '..', 'node_modules'), path.resolve(appDir, '..', 'node_modules')];
  return createServer({ ...config, configFile: false, appType: 'custom', server: { middlewareMode: true, fs: { strict: true, allow } }, logLevel: 'warn' });
}

/** The paths Vite's dev server answers: its client, the app's sources and the pre-bundled dependencies. */
export const DEV_PREFIXES = ['/@vite/*', '/@fs/*', '/@id/*', '/src/*', '/node_modules/*'];
