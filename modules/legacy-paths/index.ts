import { defineModule } from '@talon/module-sdk';
import { aliasRoutes } from './routes/aliases.ts';

export default defineModule({
  register(ctx) {
    const restart = () => {
      // Security modules keep running (a restart must not open a gap in them); this one answers the request.
      const modules = ctx.kernel
        .modules()
        .filter((m) => m.state === 'running' && !m.critical && m.id !== ctx.id)
        .map((m) => m.id);
      ctx.setTimeout(async () => {
        for (const name of modules) {
          const outcome = await ctx.kernel.reloadModule(name);
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
