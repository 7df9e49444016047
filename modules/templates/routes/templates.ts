/** GET /api/templates, /api/templates/{name}, /api/templates/{name}/toml, /api/profiles, /api/profiles/{name}. */
import { notFound, type Routes } from '@talon/module-sdk';
import { NAME_RE, manifestView, type TemplateSource } from '../services/templates.ts';
import { PROFILES } from '../services/profiles.ts';

const nameParams = { type: 'object', properties: { name: { type: 'string', maxLength: 200 } }, required: ['name'] } as const;

export function templateRoutes(app: Routes, templates: () => Promise<TemplateSource[]>): void {
  const find = async (name: string) => {
    const t = NAME_RE.test(name) ? (await templates()).find((x) => x.name === name) : undefined;
    if (!t) throw notFound(`Template '${name}' not found`);
    return t;
  };

  app.get('/api/templates', { schema: { summary: 'Agent templates', tags: ['templates'] } }, async () => {
    const list = await templates();
    const items = await Promise.all(
      list.map(async (t) => ({ name: t.name, description: manifestView(await t.read()).manifest?.description ?? '', source: t.source })),
    );
    return { templates: items, total: items.length };
  });

  app.get('/api/templates/:name', { schema: { summary: 'One agent template', tags: ['templates'], params: nameParams } }, async (request) => {
    const t = await find(request.params.name);
    const toml = await t.read();
    const view = manifestView(toml);
    return {
      name: t.name,
      source: t.source,
      ...(view.manifest ? { manifest: view.manifest } : { error: `the template does not parse: ${view.error}` }),
      manifest_toml: toml,
    };
  });

  app.get(
    '/api/templates/:name/toml',
    { schema: { summary: 'The raw TOML of an agent template', tags: ['templates'], params: nameParams } },
    async (request, reply) => {
      const t = await find(request.params.name);
      return reply.type('text/plain; charset=utf-8').send(await t.read());
    },
  );

  app.get('/api/profiles', { schema: { summary: 'Named tool profiles', tags: ['templates'] } }, async () =>
    Object.entries(PROFILES).map(([name, tools]) => ({ name, tools })),
  );

  app.get('/api/profiles/:name', { schema: { summary: 'One tool profile', tags: ['templates'], params: nameParams } }, async (request) => {
    const tools = PROFILES[request.params.name];
    if (!tools || !Object.hasOwn(PROFILES, request.params.name))
      throw notFound(`Profile '${request.params.name}' not found (${Object.keys(PROFILES).join(', ')})`);
    return { name: request.params.name, tools };
  });
}
