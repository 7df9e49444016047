import { existsSync } from 'node:fs';
import path from 'node:path';
import { defineModule } from '@talon/module-sdk';
import { authStatus } from '@talon/auth';
import { dashboardSessions } from '@talon/oidc';
import type { IncomingHttpHeaders } from 'node:http';
import type { ViteDevServer } from 'vite';
import { loadBundle, type Bundle } from './services/assets.ts';
import { runBuild } from './services/build.ts';
import { lacking, pick } from './services/coverage.ts';
import { startDevServer } from './services/dev-server.ts';
import type { AuthMode } from './services/page.ts';
import { DashboardViews } from './services/views.ts';
import { loadPwa } from './services/pwa.ts';
import { appRoutes } from './routes/app.ts';
import { pwaRoutes } from './routes/pwa.ts';
import { devRoutes } from './routes/dev.ts';
import { viewRoutes } from './routes/views.ts';

export default defineModule({
  register(ctx) {
    const dist = path.join(ctx.dir, 'dist');
    // The build with third-party modules' views (services/coverage.ts).
    const ownDist = path.join(ctx.dataDir, 'dist');
    const appDir = path.join(ctx.dir, 'app');
    const repoRoot = path.resolve(ctx.dir, '..', '..');
    const dev = ctx.kernel.dev && existsSync(appDir);
    const abort = new AbortController();
    const pwa = loadPwa(path.join(appDir, 'pwa'));
    const views = new DashboardViews((module, problem) => ctx.log.warn({ module }, `module '${module}': ${problem}`));
    let bundle: Bundle | undefined;
    let building = false;
    // A module was loaded while a build ran: its views may not be in it.
    let missed = false;
    let ready = false;
    let failure: string | undefined;
    let vite: ViteDevServer | undefined;

    const listed = () =>
      views.listed(ctx.kernel.modules(), (module, id) => dev || (bundle?.manifest.views.some((v) => v.module === module && v.id === id) ?? false));
    // Without the auth module the API is open; a valid dashboard session (oidc) goes straight in.
    const authMode = (headers: IncomingHttpHeaders): AuthMode => {
      const sessions = ctx.tryUse(dashboardSessions);
      const keyRequired = ctx.tryUse(authStatus)?.keyRequired() ?? false;
      const mode = !keyRequired ? 'open' : sessions?.authenticate(headers) ? 'session' : 'api_key';
      const modules = ctx.kernel
        .modules()
        .filter((m) => m.state === 'running')
        .map((m) => m.id);
      return { mode, oidc: sessions !== undefined, modules, views: mode === 'api_key' ? undefined : listed() };
    };

    /**
     * Serves a build that holds every running module's views: the install's, or the data folder's; else builds one
     * (in the background: the API serves meanwhile, GET / shows a page that refreshes itself, or the older build).
     */
    async function cover(): Promise<void> {
      if (abort.signal.aborted) return;
      if (building) {
        // A module loaded during a build: look again once it is done (see below).
        missed = true;
        return;
      }
      const running = views.running(ctx.kernel.modules());
      const install = loadBundle(dist);
      const found = pick(install, loadBundle(ownDist), running);
      if (found) {
        bundle = found;
        return;
      }
      bundle ??= install;
      ctx.log.info(`building the dashboard (${install ? lacking(install.manifest, running).join('; ') : 'it was not built'})`);
      building = true;
      missed = false;
      const thirdParty = running.filter((m) => m.thirdParty).map((m) => m.dir);
      const result = await runBuild(repoRoot, abort.signal, install ? { out: ownDist, modules: thirdParty } : undefined);
      building = false;
      if (abort.signal.aborted) return;
      if (!result.ok) {
        failure = result.output;
        ctx.log.error({ output: result.output }, 'the dashboard build failed; GET / says so until it is built');
        return;
      }
      ctx.log.info('the dashboard is built');
      // The install's build may still lack third-party views: one more round. A build into the data folder is served
      // as it is, so a view that cannot be built is not built again and again, unless a module was loaded meanwhile.
      if (install) bundle = loadBundle(ownDist);
      if (!install || missed) await cover();
    }

    // At boot the other modules start after this one: what they declare is known once the service is ready. A
    // module loaded later (a reload, a module switched on) may bring views too.
    ctx.hooks.kernel.kernel.ready.tap('dashboard', () => {
      ready = true;
      if (!dev) void cover();
    });
    ctx.hooks.kernel.module.loaded.tap('dashboard', () => {
      if (ready && !dev) void cover();
    });

    return {
      async start() {
        if (dev) {
          // The third-party modules with views, running or not yet started (this module starts before most).
          const thirdParty = ctx.kernel.modules().filter((m) => m.thirdParty && m.contributes.dashboard !== undefined);
          vite = await startDevServer(
            appDir,
            thirdParty.map((m) => m.dir),
          );
          return;
        }
        bundle = loadBundle(dist);
        if (!bundle) void cover();
      },
      async stop() {
        abort.abort();
        await vite?.close();
      },
      routes(app) {
        viewRoutes(app, listed);
        pwaRoutes(app, pwa);
        if (dev) devRoutes(app, appDir, () => vite, authMode);
        else appRoutes(app, { bundle: () => bundle, pending: () => ({ building, failure }), authMode });
      },
    };
  },
});
