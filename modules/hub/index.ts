import path from 'node:path';
import { defineModule } from '@talon/module-sdk';
import { artifactService, hubEvents, registryService as registryRef } from '@talon/hub';
import { skillStore, skillsHooks } from '@talon/skills';
import { netFetch } from '@talon/net';
import { hubConfigSchema, type HubConfig } from './config.ts';
import { artifacts } from './services/artifacts.ts';
import { Registry } from './services/registry.ts';
import { registryService, type Which } from './services/hub.ts';
import { resolveSource } from './services/resolve.ts';
import { hubRoutes } from './routes/hub.ts';

export default defineModule<HubConfig>({
  configSchema: hubConfigSchema,
  events: [hubEvents],
  register(ctx) {
    const arts = artifacts({
      net: () => ctx.tryUse(netFetch),
      allowHosts: () => ctx.config.allow_hosts,
      timeoutMs: () => ctx.config.sync_timeout_secs * 1000,
    });
    const skills = () => ctx.use(skillStore);
    const events = ctx.events.of(hubEvents);
    const make = (name: Which, url: () => string) =>
      new Registry({
        name,
        url,
        cacheDir: path.join(ctx.dataDir, name),
        intervalMs: () => ctx.config.sync_interval_secs * 1000,
        maxArchiveBytes: () => ctx.config.max_archive_bytes,
        artifacts: arts,
        skills,
        onSynced: (status, changed) => events.publish('hub.synced', { registry: name, revision: status.revision, changed }),
      });
    const hub = make('hub', () => ctx.config.registry_url);
    const mirror = make('hub-cn', () => ctx.config.mirror_url || ctx.config.registry_url);
    const pick = (which: Which) => (which === 'hub' ? hub : mirror);
    ctx.provide(registryRef, registryService(pick));
    ctx.provide(artifactService, arts);
    ctx.hooks.tap(skillsHooks).resolveSource.tapPromise('hub', (request) => resolveSource(request, { hub, artifacts: arts }));
    return {
      routes: (app) => hubRoutes(app, { pick, skills, pageSize: () => ctx.config.page_size, stagingDir: () => path.join(ctx.dataDir, 'staging') }),
    };
  },
});
