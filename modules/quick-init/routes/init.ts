/**
 * Quick init. "Initialised" means config.toml chooses a default model. Otherwise the first catalogue provider
 * whose key variable is set in the environment (in catalogue order) and its first model are appended to
 * config.toml as a [default_model] table — appended, so the file's comments stay — and adopted at once.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { HttpError, type ConfigAccess, type Routes } from '@talon/module-sdk';
import type { CatalogService } from '@talon/catalog';

export function initRoutes(app: Routes, config: ConfigAccess, catalog: () => CatalogService | undefined): void {
  app.post('/api/init', { schema: { summary: 'Quick init: a minimal configuration from the environment', tags: ['system'] } }, async (request) => {
    const current = config.read();
    if (current.default_model !== undefined) {
      return { status: 'already_initialized', message: `${config.file} already chooses a default model; edit it or use POST /api/config/set` };
    }
    // Only providers with chat models can be the default model (a media-only provider such as elevenlabs cannot).
    const cat = catalog();
    const providers = (cat?.providers() ?? []).filter((p) => cat!.models({ provider: p.name }).length > 0);
    const found = providers.find((p) => p.env_var && process.env[p.env_var]?.trim());
    if (!found) {
      const vars = providers.flatMap((p) => (p.env_var ? [p.env_var] : [])).slice(0, 8);
      throw new HttpError(
        409,
        `no provider key in the environment: set one of ${vars.join(', ') || 'the provider key variables'} and restart, or set [default_model] in config.toml`,
      );
    }
    // A provider with models, by the filter above.
    const model = cat!.models({ provider: found.name })[0].id;
    const table = `\n[default_model]\nprovider = ${JSON.stringify(found.name)}\nmodel = ${JSON.stringify(model)}\napi_key_env = ${JSON.stringify(found.env_var)}\n`;
    config.check({ ...current, default_model: { provider: found.name, model, api_key_env: found.env_var } });
    appendFileSync(config.file, table);
    await config.apply(config.read(), '');
    request.log.info({ provider: found.name, model }, 'quick init wrote [default_model]');
    return {
      status: 'initialized',
      provider: found.name,
      model,
      api_key_env: found.env_var,
      config_file: config.file,
      snippet: readFileSync(config.file, 'utf8').includes(table) ? table.trim() : undefined,
    };
  });
}
