/** The skills endpoints of the spec: list, detail, supporting file, create, install, uninstall, reload. */
import { readFileSync, statSync } from 'node:fs';
import { badRequest, notFound, safeJoin, type Routes } from '@talon/module-sdk';
import type { SkillStore } from '@talon/skills';
import { LINKED_FOLDERS } from '../services/tree.ts';
import type { SkillRegistry } from '../services/store.ts';
import { matchesEtag, SkillListing } from '../services/listing.ts';

const nameParams = { type: 'object', properties: { name: { type: 'string', maxLength: 200 } }, required: ['name'] } as const;
const MAX_FILE_BYTES = 256 * 1024;

const createBody = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 64 },
    description: { type: 'string', minLength: 1, maxLength: 1024 },
    prompt_context: { type: 'string', maxLength: 160000 },
    tags: { type: 'array', items: { type: 'string', maxLength: 64 }, maxItems: 32 },
  },
  required: ['name', 'description'],
  additionalProperties: false,
} as const;

const installBody = {
  type: 'object',
  properties: {
    source: { type: 'string', minLength: 1, maxLength: 4096, description: 'an absolute folder path, a git URL (https), an archive URL or a registry name' },
    verify: { type: 'boolean', default: false, description: 'require a valid signature by a trusted signer' },
  },
  required: ['source'],
  additionalProperties: false,
} as const;

const uninstallBody = {
  type: 'object',
  properties: { name: { type: 'string', minLength: 1, maxLength: 200 } },
  required: ['name'],
  additionalProperties: false,
} as const;

export interface SkillRouteDeps {
  store: SkillStore;
  registry: SkillRegistry;
  create: (body: { name: string; description: string; prompt_context?: string; tags?: string[] }) => Promise<{ name: string; version: string }>;
}

export function skillRoutes(app: Routes, deps: SkillRouteDeps): void {
  const { store, registry } = deps;
  const listing = new SkillListing(store, registry);
  app.get(
    '/api/skills',
    {
      schema: {
        summary: 'Installed skills',
        tags: ['skills'],
        querystring: { type: 'object', properties: { category: { type: 'string', description: 'only skills of this category' } } },
      },
    },
    async (request, reply) => {
      const body = listing.body(request.query.category);
      reply.header('etag', body.etag);
      if (matchesEtag(request.headers['if-none-match'], body.etag)) return reply.code(304).send();
      return reply.type('application/json; charset=utf-8').send(body.json);
    },
  );

  app.get('/api/skills/:name', { schema: { summary: 'One skill', tags: ['skills'], params: nameParams } }, async (request) => {
    const detail = await store.detail(request.params.name);
    if (!detail) throw notFound(`Skill '${request.params.name}' not found`);
    return detail;
  });

  app.get(
    '/api/skills/:name/file',
    {
      schema: {
        summary: 'A supporting file of a skill (references, templates, scripts, assets)',
        tags: ['skills'],
        params: nameParams,
        querystring: { type: 'object', properties: { path: { type: 'string', maxLength: 1024 } } },
      },
    },
    async (request) => {
      const skill = registry.get(request.params.name);
      if (!skill) throw notFound(`Skill '${request.params.name}' not found`);
      const rel = request.query.path;
      if (!rel) throw badRequest(`query 'path' is required: a file under ${LINKED_FOLDERS.join(', ')}`);
      const folder = rel.split(/[\\/]/)[0];
      if (!(LINKED_FOLDERS as readonly string[]).includes(folder)) throw badRequest(`path '${rel}' must be inside ${LINKED_FOLDERS.join(', ')}`);
      const file = safeJoin(skill.dir, rel);
      let size: number;
      try {
        const st = statSync(file);
        if (!st.isFile()) throw new Error('not a file');
        size = st.size;
      } catch {
        throw notFound(`skill '${skill.name}' has no file '${rel}'`);
      }
      const data = readFileSync(file).subarray(0, MAX_FILE_BYTES);
      const binary = data.includes(0);
      return {
        name: skill.name,
        path: rel,
        size,
        truncated: size > MAX_FILE_BYTES,
        encoding: binary ? 'base64' : 'utf8',
        content: data.toString(binary ? 'base64' : 'utf8'),
      };
    },
  );

  app.post('/api/skills/create', { schema: { summary: 'Create a prompt-only skill', tags: ['skills'], body: createBody } }, async (request) => {
    const created = await deps.create(request.body);
    return { status: 'created', name: created.name, version: created.version, message: `Skill '${created.name}' created and loaded` };
  });

  app.post(
    '/api/skills/install',
    { schema: { summary: 'Install a skill from a folder, a git URL or a registry', tags: ['skills'], body: installBody } },
    async (request, reply) => {
      const result = await store.install(request.body.source, { verify: request.body.verify });
      request.log.info({ skill: result.skill, version: result.version }, 'skill installed');
      return reply.code(201).send({ status: 'installed', ...result });
    },
  );

  app.post('/api/skills/uninstall', { schema: { summary: 'Uninstall a skill', tags: ['skills'], body: uninstallBody } }, async (request) => {
    await store.uninstall(request.body.name);
    return { status: 'uninstalled', skill: request.body.name };
  });

  app.post('/api/skills/reload', { schema: { summary: 'Read every skill again', tags: ['skills'] } }, async () => ({
    status: 'reloaded',
    count: await store.reload(),
  }));
}
