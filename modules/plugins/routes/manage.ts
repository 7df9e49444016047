/** One plugin: install-deps, status, health, env, export, lint, enable, reload, sign; and prewarm. */
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { HttpError, notFound, type Routes } from '@talon/module-sdk';
import type { HookName } from '@talon/plugins';
import type { PluginsApp } from '../services/app.ts';
import { installPluginDeps } from '../services/deps.ts';
import { exportPlugin } from '../services/export.ts';
import { lint } from '../services/lint.ts';
import { signPlugin } from '../services/signing.ts';
import { DISABLED_MARKER, launcherPresent, type LoadedPlugin } from '../services/store.ts';
import { envView } from '../services/views.ts';
import { enableBody, nameParams, prewarmBody } from './schemas.ts';

const tags = ['plugins'];

export function manageRoutes(app: Routes, a: PluginsApp): void {
  const load = (name: string): LoadedPlugin => {
    const p = a.store.get(name);
    if (!p) throw notFound(`plugin '${name}' not found`);
    return p;
  };

  app.post(
    '/api/plugins/:name/install-deps',
    { schema: { summary: "Install the plugin's runtime dependencies", tags, params: nameParams } },
    async (request) => {
      const p = load(request.params.name);
      const outcome = await installPluginDeps(p, a.sandbox(), a.config().deps_timeout_secs * 1000);
      request.log.info({ plugin: p.name, status: outcome.status }, 'plugin install-deps');
      return outcome;
    },
  );

  app.get('/api/plugins/:name/status', { schema: { summary: 'Runtime status of a plugin', tags, params: nameParams } }, async (request) => {
    const p = load(request.params.name);
    const stack = a.engine.configured();
    return {
      name: p.name,
      version: p.manifest?.version ?? null,
      enabled: p.enabled,
      status: p.status,
      error: p.error,
      runtime: p.runtime,
      launcher: p.launcher,
      runtime_available: launcherPresent(p),
      hooks_valid: p.hooksValid,
      signed: p.signed,
      active: p.status === 'loaded' && stack.includes(p.name),
      active_as_single: stack.length === 1 && stack[0] === p.name,
      stack_position: stack.includes(p.name) ? stack.indexOf(p.name) : null,
      persistent_processes: a.pool.running(p.name),
      spare_processes: a.pool.spareProcesses(p.name),
    };
  });

  app.get(
    '/api/plugins/:name/health',
    { schema: { summary: 'Per-hook calls, errors and latency; the last calls', tags, params: nameParams }, config: { quiet: true } },
    async (request) => {
      const p = load(request.params.name);
      return {
        plugin: p.name,
        status: p.status,
        active: p.status === 'loaded' && a.engine.configured().includes(p.name),
        version: p.manifest?.version ?? null,
        hooks_valid: p.hooksValid,
        ...a.stats.view(p.name),
      };
    },
  );

  app.get(
    '/api/plugins/:name/env',
    { schema: { summary: "The plugin's declared environment (secret-looking values redacted)", tags, params: nameParams } },
    async (request) => envView(load(request.params.name)),
  );

  app.get('/api/plugins/:name/export', { schema: { summary: 'The plugin folder as a .tar.gz', tags, params: nameParams } }, async (request, reply) => {
    const p = load(request.params.name);
    const body = await exportPlugin(p.dir, p.name);
    return reply.type('application/gzip').header('content-disposition', `attachment; filename="${p.name}.tar.gz"`).send(body);
  });

  app.get(
    '/api/plugins/:name/lint',
    { schema: { summary: 'Manifest and hook checks (422 when not ok)', tags, params: nameParams } },
    async (request, reply) => {
      const report = lint(load(request.params.name));
      return reply.code(report.ok ? 200 : 422).send(report);
    },
  );

  app.post(
    '/api/plugins/:name/enable',
    { schema: { summary: 'Enable (or, with enabled false, disable) a plugin', tags, params: nameParams, body: enableBody } },
    async (request) => {
      const p = load(request.params.name);
      const enabled = request.body.enabled ?? true;
      const marker = path.join(p.dir, DISABLED_MARKER);
      if (enabled) rmSync(marker, { force: true });
      else if (!existsSync(marker)) writeFileSync(marker, 'disabled through POST /api/plugins/{name}/enable\n');
      a.pool.evict(p.name);
      const next = a.store.loadOne(p.name)!;
      return { enabled: next.enabled, name: p.name, status: next.status, message: enabled ? `plugin '${p.name}' enabled` : `plugin '${p.name}' disabled` };
    },
  );

  app.post(
    '/api/plugins/:name/reload',
    { schema: { summary: 'Read the plugin again; its persistent processes restart', tags, params: nameParams } },
    async (request) => {
      load(request.params.name);
      const evicted = a.pool.evict(request.params.name);
      const p = a.store.loadOne(request.params.name);
      if (!p) throw notFound(`plugin '${request.params.name}' is gone`);
      return { name: p.name, version: p.manifest?.version ?? null, status: p.status, error: p.error, hooks_valid: p.hooksValid, processes_evicted: evicted };
    },
  );

  app.post(
    '/api/plugins/:name/sign',
    { schema: { summary: 'Sign plugin.toml and the hook files with the node Ed25519 key', tags, params: nameParams } },
    async (request) => {
      const p = load(request.params.name);
      if (!p.manifest) throw new HttpError(400, `plugin '${p.name}' does not load: ${p.error}`);
      const signed = signPlugin(p.dir, p.manifest, a.signer());
      const next = a.store.loadOne(p.name)!;
      return {
        signed: true,
        plugin: p.name,
        content_hash: signed.contentHash,
        hashes: signed.files,
        count: Object.keys(signed.files).length,
        signer: signed.envelope.signer_public_key,
        status: next.status,
        message: `signed ${Object.keys(signed.files).length} files into SIGNATURE.json; the signature is checked at every load`,
      };
    },
  );

  app.post(
    '/api/plugins/prewarm',
    { schema: { summary: 'Start the persistent hook processes of plugins that allow them', tags, body: prewarmBody } },
    async (request) => {
      const names =
        request.body.plugins ??
        a.store
          .list()
          .filter((p) => p.status === 'loaded')
          .map((p) => p.name);
      const results: Record<string, { ok: boolean; message: string; processes: Array<{ hook: string; pid: number | undefined }> }> = {};
      for (const name of names) {
        const p = a.store.get(name);
        if (!p) results[name] = { ok: false, message: 'not installed', processes: [] };
        else if (p.status !== 'loaded') results[name] = { ok: false, message: `plugin is ${p.status}${p.error ? `: ${p.error}` : ''}`, processes: [] };
        else if (!p.manifest!.persistent)
          results[name] = { ok: false, message: 'the plugin does not allow persistent processes (persistent_subprocess = true in [hooks])', processes: [] };
        else {
          for (const hook of Object.keys(p.manifest!.hooks) as HookName[]) await a.runner.prewarm(p, hook);
          results[name] = { ok: true, message: 'persistent processes started', processes: a.pool.running(name) };
        }
      }
      return { results };
    },
  );
}
