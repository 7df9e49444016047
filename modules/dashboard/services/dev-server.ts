/**
 * `npm run dev`: the app is served through Vite's dev server in middleware mode, on the service's own port and
 * under its own headers, so the page a developer edits is the page users get (same origin, same CSP, same auth).
 * Edits reload the page (Vite's client over its own WebSocket port). The app's sources are .tsx/.css files,
 * which the kernel's module watcher ignores, so an edit to the app does not reload the module itself.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ViteDevServer, UserConfig } from 'vite';

export async function startDevServer(appDir: string): Promise<ViteDevServer> {
  const { createServer } = await import('vite');
  const { default: config } = (await import(pathToFileURL(path.join(appDir, 'vite.config.mjs')).href)) as { default: UserConfig };
  // Vite serves files by path (/@fs/...): only the app and the installed packages, not the rest of the checkout.
  const allow = [appDir, path.resolve(appDir, '..', '..', '..', 'node_modules')];
  return createServer({ ...config, configFile: false, appType: 'custom', server: { middlewareMode: true, fs: { strict: true, allow } }, logLevel: 'warn' });
}

/** The paths Vite's dev server answers: its client, the app's sources and the pre-bundled dependencies. */
export const DEV_PREFIXES = ['/@vite/*', '/@fs/*', '/@id/*', '/src/*', '/node_modules/*'];
