import { badRequest, type ModuleContext, type Routes } from '@talon/module-sdk';
import { getIn, toToml } from '../services/toml.ts';
import type { createEditor } from '../services/editor.ts';

const exportQuery = {
  type: 'object',
  properties: { format: { type: 'string', description: 'toml (default) or json' } },
} as const;

const setBody = {
  type: 'object',
  properties: {
    path: { type: 'string', description: 'dotted key, e.g. default_model.model' },
    key: { type: 'string', description: 'alias of path' },
    value: { description: 'the new value (any JSON value but null)' },
  },
  required: ['value'],
} as const;

export function configRoutes(app: Routes, ctx: ModuleContext, editor: ReturnType<typeof createEditor>): void {
  const config = ctx.kernel.config;

  app.get('/api/config', { schema: { summary: 'Configuration, secrets redacted', tags: ['config'] }, config: { rateCost: 2 } }, async () => config.redacted());

  app.get('/api/config/schema', { schema: { summary: 'JSON Schema of config.toml', tags: ['config'] } }, async () => config.schema());

  app.get('/api/registry/schema', { schema: { summary: 'JSON Schema of config.toml for editors', tags: ['config'] } }, async (request) => {
    // Editors (VS Code, taplo) want an $id to cache by and a title to show; taplo reads x-taplo-info.
    const host = request.headers.host ?? ctx.kernel.listenAddress() ?? 'localhost';
    return {
      ...config.schema(),
      $id: `${request.protocol}://${host}/api/registry/schema`,
      title: 'Talon configuration (config.toml)',
      description: 'Schema of config.toml: kernel keys and the section of every known module. Unknown keys are ignored with a warning.',
      'x-taplo-info': { patterns: ['config\\.toml$'] },
    };
  });

  app.get(
    '/api/config/export',
    { schema: { summary: 'Full effective configuration, secrets redacted', tags: ['config'], querystring: exportQuery } },
    async (request, reply) => {
      const format = (request.query.format ?? 'toml').toLowerCase();
      const effective = config.redacted();
      if (format === 'json') return effective;
      if (format !== 'toml') throw badRequest(`unsupported export format '${request.query.format}' (use toml or json)`);
      return reply.type('application/toml; charset=utf-8').header('content-disposition', 'attachment; filename="config.toml"').send(toToml(effective));
    },
  );

  app.post('/api/config/set', { schema: { summary: 'Sets one configuration value at runtime', tags: ['config'], body: setBody } }, async (request) => {
    const { path: given, key, value } = request.body;
    if (given !== undefined && key !== undefined && given !== key) throw badRequest("body has both 'path' and 'key' with different values; send one");
    const path = given ?? key;
    if (path === undefined) throw badRequest('body must have property \'path\' (the dotted key to set, e.g. "log_level")');
    if (value === null) throw badRequest("value must not be null (TOML has no null); send the key's default instead");
    // Validation, the config-changed hook and persistence are the kernel's (400 naming the problem).
    const result = await editor.set(path, value);
    request.log.info({ path: result.path }, 'configuration changed over the API');
    return {
      status: 'updated',
      path: result.path,
      // Read back through the redacted view, so a secret never comes back
      // (an alias such as cors_origin is not in that view, and is no secret).
      value:
        getIn(
          config.redacted(),
          result.path.split('.').map((s) => s.trim()),
        ) ?? value,
      restart_required: result.restartRequired,
    };
  });

  app.post('/api/config/reload', { schema: { summary: 'Reloads config.toml from disk', tags: ['config'] } }, async (request) => {
    const { changed, warnings } = await editor.reload();
    for (const warning of warnings) request.log.warn(warning);
    return { status: 'reloaded', changed, warnings };
  });
}
