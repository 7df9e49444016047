import { conflict, defineModule } from '@talon/module-sdk';
import { llmService } from '@talon/llm';
import { aliasRoutes } from './routes/aliases.ts';

export default defineModule({
  register(ctx) {
    const restart = () => {
      // On PostgreSQL other nodes may share the database (a fleet) and would keep running their copies (docs/fleet.md).
      if (ctx.store.dialect === 'postgres')
        throw conflict(
          'no in-process restart on PostgreSQL: a restart of one node would split the fleet; restart the nodes one after another (rolling) instead',
        );
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
    // [default_model] is the llm module's key: read through its contract ('' = not set, answered as null).
    const defaultModel = () => {
      const configured = ctx.tryUse(llmService)?.defaultModel();
      const value = (v: string | undefined) => v || null;
      return {
        provider: value(configured?.provider),
        model: value(configured?.model),
        base_url: value(configured?.base_url),
        api_key_env: value(configured?.api_key_env),
      };
    };
    return { routes: (app) => aliasRoutes(app, { restart, defaultModel }) };
  },
});
