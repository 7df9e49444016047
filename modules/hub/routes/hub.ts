/** Marketplace, hub, hub-cn and the skills registry listing. */
import { mkdtempSync, rmSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { badRequest, notFound, type Routes } from '@talon/module-sdk';
import type { RegistryEntry } from '@talon/hub';
import type { SkillStore } from '@talon/skills';
import semverGt from 'semver/functions/gt.js';
import semverValid from 'semver/functions/valid.js';
import type { Registry } from '../services/registry.ts';
import { page, search, type Which } from '../services/hub.ts';

export interface HubRouteDeps {
  pick: (which: Which) => Registry;
  skills: () => SkillStore;
  pageSize: () => number;
  stagingDir: () => string;
}

const searchQuery = {
  type: 'object',
  properties: { q: { type: 'string', maxLength: 200 }, page: { type: 'integer', minimum: 1, default: 1 } },
} as const;
const browseQuery = {
  type: 'object',
  properties: { category: { type: 'string', maxLength: 100 }, page: { type: 'integer', minimum: 1, default: 1 } },
} as const;
const slugParams = { type: 'object', properties: { slug: { type: 'string', minLength: 1, maxLength: 200 } }, required: ['slug'] } as const;
const installBody = {
  type: 'object',
  properties: {
    slug: { type: 'string', minLength: 1, maxLength: 200 },
    verify: { type: 'boolean', default: false, description: 'require a valid signature by a trusted signer' },
  },
  required: ['slug'],
  additionalProperties: false,
} as const;

const requireQ = (q: string | undefined) => {
  if (!q?.trim()) throw badRequest("query 'q' is required");
  return q.trim();
};

export function hubRoutes(app: Routes, deps: HubRouteDeps): void {
  const installed = () =>
    new Set(
      deps
        .skills()
        .list()
        .map((s) => s.name),
    );
  const item = (e: RegistryEntry, have: Set<string>) => ({ ...e, installed: have.has(e.name) || have.has(e.slug) });
  const status = (which: Which) => {
    const s = deps.pick(which).status();
    return { registry: s.registry, revision: s.revision, synced_at: s.synced_at, offline: s.offline, ...(s.error && { error: s.error }) };
  };

  app.get('/api/marketplace/search', { schema: { summary: 'Search the marketplace', tags: ['hub'], querystring: searchQuery } }, async (request) => {
    const q = requireQ(request.query.q);
    const found = search(await deps.pick('hub').entries('skills'), q);
    const results = page(found, request.query.page, deps.pageSize()).map(({ name, author, description, downloads, version, slug }) => ({
      name,
      author,
      description,
      downloads,
      version,
      slug,
    }));
    return { results, total: found.length, page: request.query.page, ...status('hub') };
  });

  for (const which of ['hub', 'hub-cn'] as const) {
    app.get(`/api/${which}/search`, { schema: { summary: `Search the ${which} registry`, tags: ['hub'], querystring: searchQuery } }, async (request) => {
      const q = requireQ(request.query.q);
      const have = installed();
      const found = search(await deps.pick(which).entries('skills'), q);
      return {
        items: page(found, request.query.page, deps.pageSize()).map((e) => item(e, have)),
        total: found.length,
        page: request.query.page,
        query: q,
        ...status(which),
      };
    });
    app.get(`/api/${which}/browse`, { schema: { summary: `Browse the ${which} registry`, tags: ['hub'], querystring: browseQuery } }, async (request) => {
      const all = await deps.pick(which).entries('skills');
      const counts = new Map<string, number>();
      for (const e of all) counts.set(e.category, (counts.get(e.category) ?? 0) + 1);
      const { category } = request.query;
      const chosen = category ? all.filter((e) => e.category === category) : all;
      const have = installed();
      return {
        categories: [...counts].sort(([a], [b]) => a.localeCompare(b)).map(([name, count]) => ({ name, count })),
        items: page(chosen, request.query.page, deps.pageSize()).map((e) => item(e, have)),
        total: chosen.length,
        page: request.query.page,
        ...status(which),
      };
    });
  }

  app.get('/api/hub/skill/:slug', { schema: { summary: 'A skill of the hub registry', tags: ['hub'], params: slugParams } }, async (request) => {
    const entry = (await deps.pick('hub').entries('skills')).find((e) => e.slug === request.params.slug);
    if (!entry) throw notFound(`skill '${request.params.slug}' is not in the hub registry`);
    return item(entry, installed());
  });

  app.get(
    '/api/hub/skill/:slug/code',
    { schema: { summary: 'The source of a hub skill (SKILL.md, skill.toml or package.json)', tags: ['hub'], params: slugParams } },
    async (request) => {
      const { slug } = request.params;
      for (const filename of ['SKILL.md', 'skill.toml', 'package.json']) {
        const code = await deps.pick('hub').readFile('skills', slug, filename);
        if (code !== undefined) return { slug, filename, code };
      }
      throw notFound(`skill '${slug}' has no readable source in the hub registry`);
    },
  );

  app.post('/api/hub/install', { schema: { summary: 'Install a skill from the hub', tags: ['hub'], body: installBody } }, async (request, reply) => {
    mkdirSync(deps.stagingDir(), { recursive: true });
    const dest = mkdtempSync(path.join(deps.stagingDir(), 'hub-'));
    try {
      const { dir, entry } = await deps.pick('hub').stage('skills', request.body.slug, path.join(dest, 'skill'));
      const result = await deps
        .skills()
        .installStaged({ dir, origin: { type: 'hub', slug: entry.slug, version: entry.version } }, { verify: request.body.verify });
      return reply.code(201).send({ status: 'installed', ...result });
    } finally {
      rmSync(dest, { recursive: true, force: true });
    }
  });

  app.post('/api/hub/sync', { schema: { summary: 'Sync the registries now', tags: ['hub'] } }, async () => ({
    hub: await deps.pick('hub').sync(),
    'hub-cn': await deps.pick('hub-cn').sync(),
  }));

  app.get(
    '/api/skills/registry',
    { schema: { summary: 'The skills of the hub registry, with installed state and available updates', tags: ['skills'] } },
    async () => {
      const entries = await deps.pick('hub').entries('skills');
      const mine = new Map(
        deps
          .skills()
          .list()
          .map((s) => [s.name, s.version]),
      );
      const skills = entries.map((e) => ({
        name: e.name,
        slug: e.slug,
        description: e.description,
        version: e.version,
        author: e.author,
        tags: e.tags,
        is_installed: mine.has(e.name),
      }));
      const updates = entries
        .filter((e) => mine.has(e.name) && semverValid(e.version) && semverValid(mine.get(e.name)!) && semverGt(e.version, mine.get(e.name)!))
        .map((e) => ({ name: e.name, installed: mine.get(e.name), available: e.version }));
      const s = deps.pick('hub').status();
      return { skills, total: skills.length, catalog_version: s.revision, synced_at: s.synced_at, offline: s.offline, updates };
    },
  );
}
