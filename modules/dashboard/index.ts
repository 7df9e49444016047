import { existsSync } from 'node:fs';
import path from 'node:path';
import { defineModule } from '@talon/module-sdk';
import { authStatus } from '@talon/auth';
import { dashboardSessions } from '@talon/oidc';
import type { IncomingHttpHeaders } from 'node:http';
import type { ViteDevServer } from 'vite';
import { loadBundle, type Bundle } from './services/assets.ts';
import { runBuild } from './services/build.ts';
import { startDevServer } from './services/dev-server.ts';
import type { AuthMode } from './services/page.ts';
import { appRoutes } from './routes/app.ts';
import { devRoutes } from './routes/dev.ts';

export default defineModule({
  register(ctx) {
    const dist = path.join(ctx.dir, 'dist');
    const appDir = path.join(ctx.dir, 'app');
    const repoRoot = path.resolve(ctx.dir, '..', '..');
    const abort = new AbortController();
    let bundle: Bundle | undefined;
    let building = false;
    let failure: string | undefined;
    let vite: ViteDevServer | undefined;
    // Without the auth module the API is open; a valid dashboard session (oidc) goes straight in.
    const authMode = (headers: IncomingHttpHeaders): AuthMode => {
      const sessions = ctx.tryUse(dashboardSessions);
      const keyRequired = ctx.tryUse(authStatus)?.keyRequired() ?? false;
      const mode = !keyRequired ? 'open' : sessions?.authenticate(headers) ? 'session' : 'api_key';
      const modules = ctx.kernel
        .modules()
        .filter((m) => m.state === 'running')
        .map((m) => m.id);
      return { mode, oidc: sessions !== undefined, modules };
    };

    async function buildNow(): Promise<void> {
      building = true;
      ctx.log.info('the dashboard was not built: building it now (node scripts/build-dashboard.mjs)');
      const result = await runBuild(repoRoot, abort.signal);
      building = false;
      if (abort.signal.aborted) return;
      if (!result.ok) {
        failure = result.output;
        ctx.log.error({ output: result.output }, 'the dashboard build failed; GET / says so until it is built');
        return;
      }
      bundle = loadBundle(dist);
      ctx.log.info('the dashboard is built');
    }

    return {
      async start() {
        if (ctx.kernel.dev && existsSync(appDir)) {
          vite = await startDevServer(appDir);
          return;
        }
        bundle = loadBundle(dist);
        // In the background: the API serves meanwhile, GET / shows a page that refreshes itself.
        if (!bundle) void buildNow();
      },
      async stop() {
        abort.abort();
        await vite?.close();
      },
      routes(app) {
        if (ctx.kernel.dev && existsSync(appDir)) devRoutes(app, appDir, () => vite, authMode);
        else appRoutes(app, { bundle: () => bundle, pending: () => ({ building, failure }), authMode });
      },
    };
  },
});
