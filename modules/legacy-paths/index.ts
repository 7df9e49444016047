import { defineModule } from '@talon/module-sdk';
import { aliasRoutes } from './routes/aliases.ts';

/** The kernel's way to restart one module, when it offers one (see .notes/kernel-bugs.md: not in KernelApi yet). */
type Restarter = { reloadModule?: (name: string) => Promise<{ ok: boolean; error?: string }> };

export default defineModule({
  register(ctx) {
    const kernel = ctx.kernel as typeof ctx.kernel & Restarter;
    const restart = () => {
      if (typeof kernel.reloadModule !== 'function') return undefined;
      // Security modules keep running (a restart must not open a gap in them); this one answers the request.
      const modules = ctx.kernel
        .modules()
        .filter((m) => m.state === 'running' && !m.critical && m.id !== ctx.id)
        .map((m) => m.id);
      ctx.setTimeout(async () => {
        for (const name of modules) {
          const outcome = await kernel.reloadModule!(name);
          if (!outcome.ok) ctx.log.error({ module: name, error: outcome.error }, 'module did not restart; its previous copy keeps serving');
        }
        ctx.log.info({ modules: modules.length }, 'restart done');
      }, 0);
      return { modules };
    };
    const defaultModel = () => {
      const raw = ctx.kernel.config.redacted().default_model as Record<string, unknown> | undefined;
      return { provider: raw?.provider ?? null, model: raw?.model ?? null, base_url: raw?.base_url ?? null, api_key_env: raw?.api_key_env ?? null };
    };
    return { routes: (app) => aliasRoutes(app, { restart, defaultModel }) };
  },
});
