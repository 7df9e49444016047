/** The plugin collection: list, detail, registries, install, uninstall, scaffold, doctor. */
import { rmSync } from 'node:fs';
import { notFound, type Routes } from '@talon/module-sdk';
import type { PluginsApp } from '../services/app.ts';
import { installPlugin } from '../services/install.ts';
import { detectRuntime, RUNTIME_SPECS, RUNTIMES, type RuntimeStatus } from '../services/runtimes.ts';
import { scaffold } from '../services/scaffold.ts';
import { launcherPresent } from '../services/store.ts';
import { pluginDetail, pluginSummary } from '../services/views.ts';
import { installBody, nameParams, scaffoldBody, uninstallBody } from './schemas.ts';

const tags = ['plugins'];
const DOCTOR_CACHE_MS = 30_000;

export function pluginRoutes(app: Routes, a: PluginsApp): void {
  let doctorCache: { at: number; runtimes: RuntimeStatus[] } | undefined;

  app.get('/api/plugins', { schema: { summary: 'Installed context-engine plugins', tags } }, async () => {
    const plugins = a.store.list().map((p) => pluginSummary(p, a.engine));
    return { plugins, total: plugins.length, context_engine: { plugins: a.engine.configured() } };
  });

  app.get('/api/plugins/registries', { schema: { summary: 'Plugins offered by the registries', tags } }, async () => {
    const registry = a.registry();
    if (!registry) return { registries: [], note: 'the hub module is not running' };
    const which = (['hub', 'hub-cn'] as const).filter((r, i) => i === 0 || registry.status(r).url !== registry.status('hub').url);
    const registries = await Promise.all(
      which.map(async (name) => {
        const status = registry.status(name);
        try {
          const plugins = (await registry.entries('plugins', name)).map((e) => ({
            name: e.slug,
            display_name: e.name,
            version: e.version,
            description: e.description,
            author: e.author,
            installed: Boolean(a.store.get(e.slug)),
          }));
          return { name, url: status.url, revision: status.revision, offline: status.offline, plugins };
        } catch (err) {
          return { name, url: status.url, revision: status.revision, offline: true, plugins: [], error: (err as Error).message };
        }
      }),
    );
    return { registries };
  });

  app.get(
    '/api/plugins/doctor',
    { schema: { summary: 'Runtimes (available, version, install hint) and plugins (runtime available, hooks valid)', tags } },
    async () => {
      if (!doctorCache || Date.now() - doctorCache.at > DOCTOR_CACHE_MS) {
        const launchers = a.config().launchers;
        const runtimes = await Promise.all(
          RUNTIMES.map((r) => detectRuntime(r, RUNTIME_SPECS[r].launcher === null ? null : (launchers[r] ?? RUNTIME_SPECS[r].launcher))),
        );
        doctorCache = { at: Date.now(), runtimes };
      }
      const plugins = a.store.list().map((p) => ({
        name: p.name,
        runtime: p.runtime,
        runtime_available: launcherPresent(p),
        hooks_valid: p.hooksValid,
        status: p.status,
        error: p.error,
        install_hint: RUNTIME_SPECS[p.runtime].installHint,
      }));
      await a.isolationProbed();
      const isolation = a.isolation();
      return {
        runtimes: doctorCache.runtimes,
        plugins,
        isolation: { method: isolation.method, network: isolation.network, pid: isolation.pid, reason: isolation.reason },
        launcher: { pid: a.launcher.pid() ?? null },
      };
    },
  );

  app.get('/api/plugins/:name', { schema: { summary: 'One plugin', tags, params: nameParams } }, async (request) => {
    const p = a.store.get(request.params.name);
    if (!p) throw notFound(`plugin '${request.params.name}' not found`);
    return pluginDetail(p, a.engine);
  });

  app.post(
    '/api/plugins/install',
    { schema: { summary: 'Install a plugin from a registry, a local folder or a git repository', tags, body: installBody } },
    async (request, reply) => {
      const p = await installPlugin(request.body, a.install);
      request.log.info({ plugin: p.name, source: request.body.source ?? null }, 'plugin installed');
      return reply.code(201).send({
        installed: true,
        name: p.name,
        version: p.manifest?.version ?? null,
        path: p.dir,
        status: p.status,
        hooks_valid: p.hooksValid,
        restart_required: false,
      });
    },
  );

  app.post('/api/plugins/uninstall', { schema: { summary: 'Uninstall a plugin by name', tags, body: uninstallBody } }, async (request) => {
    const p = a.store.get(request.body.name);
    if (!p) throw notFound(`plugin '${request.body.name}' not found`);
    a.pool.evict(p.name);
    rmSync(p.dir, { recursive: true, force: true });
    a.store.forget(p.name);
    a.stats.forget(p.name);
    return { removed: true, name: p.name };
  });

  app.post(
    '/api/plugins/scaffold',
    { schema: { summary: 'Create a plugin project with hook scaffolding for a runtime', tags, body: scaffoldBody } },
    async (request, reply) => {
      const { name, description, runtime } = request.body;
      const made = scaffold(a.pluginsDir(), { name, description: description ?? '', runtime });
      const p = a.store.loadOne(name);
      return reply.code(201).send({ scaffolded: true, name, runtime, path: made.path, files: made.files, status: p?.status ?? null });
    },
  );
}
