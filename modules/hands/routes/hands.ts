/** Hand definitions: list, install, detail, uninstall, settings, dependency checks and installs, reload. */
import { rmSync } from 'node:fs';
import { HttpError, badRequest, conflict, notFound, type Routes } from '@talon/module-sdk';
import type { HandDefinition } from '@talon/hands';
import type { SandboxService } from '@talon/tools';
import type { HandCatalog } from '../services/catalog.ts';
import type { HandInstaller } from '../services/install.ts';
import { installDeps } from '../services/install-deps.ts';
import { isLive, type InstanceStore } from '../services/instances.ts';
import { requirementViews, requirementsMet } from '../services/requirements.ts';
import type { HandSettings } from '../services/settings.ts';
import { handDetail, handSummary } from '../services/views.ts';
import { handParams, installBody, settingsBody } from './schemas.ts';

export interface HandRouteDeps {
  catalog: HandCatalog;
  installer: HandInstaller;
  instances: InstanceStore;
  settings: HandSettings;
  sandbox: () => SandboxService | undefined;
  depsTimeoutMs: () => number;
  workDir: string;
  /** Tells the other processes of the home that the installed hands changed (they read the folders again). */
  definitionsChanged: () => Promise<void>;
}

const tags = ['hands'];

export function handRoutes(app: Routes, deps: HandRouteDeps): void {
  const { catalog, instances, settings } = deps;
  const load = (id: string): HandDefinition => {
    const def = catalog.get(id);
    if (!def) throw notFound(`hand '${id}' not found`);
    return def;
  };
  const dependencyView = (def: HandDefinition) => {
    const requirements = requirementViews(def);
    const live = instances.ofHand(def.id).find(isLive);
    const met = requirementsMet(requirements);
    return { hand_id: def.id, requirements_met: met, active: Boolean(live), degraded: Boolean(live) && !met, platform: process.platform, requirements };
  };

  app.get('/api/hands', { schema: { summary: 'Installed hand definitions', tags } }, async () => {
    const hands = catalog.list().map((def) => handSummary(def, instances.ofHand(def.id)));
    const categories = [...new Set(hands.map((h) => h.category))].sort();
    return { hands, total: hands.length, categories, broken: catalog.failures() };
  });

  app.post(
    '/api/hands/install',
    { schema: { summary: 'Install a hand from HAND.toml text, a registry slug or a local folder', tags, body: installBody } },
    async (request, reply) => {
      const { manifest_toml, toml_content, ...rest } = request.body;
      if (manifest_toml !== undefined && toml_content !== undefined) throw badRequest('give toml_content or manifest_toml, not both');
      const { hand, findings } = await deps.installer.install({ ...rest, toml_content: toml_content ?? manifest_toml });
      await deps.definitionsChanged();
      request.log.info({ hand: hand.id }, 'hand installed');
      return reply.code(201).send({ status: 'installed', hand_id: hand.id, name: hand.name, version: hand.version, hand: handDetail(hand, []), findings });
    },
  );

  app.post('/api/hands/reload', { schema: { summary: 'Read the hand folders again', tags } }, async () => {
    const outcome = catalog.reload();
    await deps.definitionsChanged();
    return { status: 'ok', ...outcome, broken: catalog.failures() };
  });

  app.get('/api/hands/:hand_id', { schema: { summary: 'One hand definition', tags, params: handParams } }, async (request) => {
    const def = load(request.params.hand_id);
    return handDetail(def, instances.ofHand(def.id));
  });

  app.delete(
    '/api/hands/:hand_id',
    { schema: { summary: 'Uninstall a custom hand (refused while it has an instance)', tags, params: handParams } },
    async (request) => {
      const def = load(request.params.hand_id);
      if (def.source === 'bundled') throw badRequest(`hand '${def.id}' is bundled with the service and cannot be uninstalled`);
      const present = instances.ofHand(def.id);
      if (present.length)
        throw conflict(
          `hand '${def.id}' has ${present.length} instance(s) (${present.map((i) => `${i.id}: ${i.status}`).join(', ')}); DELETE /api/hands/instances/{id} first`,
        );
      rmSync(def.path, { recursive: true, force: true });
      await settings.forget(def.id);
      catalog.reload();
      await deps.definitionsChanged();
      return { status: 'uninstalled', hand_id: def.id };
    },
  );

  app.post('/api/hands/:hand_id/check-deps', { schema: { summary: 'Which requirements are met here', tags, params: handParams } }, async (request) =>
    dependencyView(load(request.params.hand_id)),
  );

  app.post(
    '/api/hands/:hand_id/install-deps',
    { schema: { summary: 'Run the declared package-manager commands of unmet requirements', tags, params: handParams } },
    async (request) => {
      const def = load(request.params.hand_id);
      const sandbox = deps.sandbox();
      if (!sandbox) throw new HttpError(503, 'installing dependencies needs the tools module (its subprocess sandbox), which is not running');
      const results = await installDeps(def, { sandbox, timeoutMs: deps.depsTimeoutMs(), workDir: deps.workDir });
      request.log.info({ hand: def.id, results: results.map((r) => `${r.key}:${r.status}`) }, 'hand install-deps');
      const view = dependencyView(def);
      return { hand_id: def.id, results, requirements_met: view.requirements_met, requirements: view.requirements };
    },
  );

  app.get(
    '/api/hands/:hand_id/settings',
    { schema: { summary: "A hand's settings: declarations, chosen and effective values", tags, params: handParams } },
    async (request) => settings.view(load(request.params.hand_id)),
  );

  app.put(
    '/api/hands/:hand_id/settings',
    { schema: { summary: "Change a hand's settings (the live instance sees them at its next model call)", tags, params: handParams, body: settingsBody } },
    async (request) => {
      const def = load(request.params.hand_id);
      await settings.update(def, request.body);
      const live = instances.ofHand(def.id).find(isLive);
      return { status: 'ok', instance_id: live?.id ?? null, ...settings.view(def) };
    },
  );
}
