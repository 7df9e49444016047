import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { defineModule } from '@talon/module-sdk';
import { agentHooks, agentRegistry, sessionStore } from '@talon/agents';
import { artifactService, registryService } from '@talon/hub';
import { manifestSigner } from '@talon/manifest-signing';
import { contextEngine, pluginEvents, type HookName } from '@talon/plugins';
import { promptScanner } from '@talon/prompt-guard';
import { sandboxService } from '@talon/tools';
import { contextEngineSchema, pluginsConfigSchema, type ContextEngineConfig, type PluginsConfig } from './config.ts';
import type { PluginsApp } from './services/app.ts';
import { ContextEngineService } from './services/engine.ts';
import { probeIsolation, type Isolation } from './services/isolation.ts';
import { ProcessPool } from './services/pool.ts';
import { HookRunner } from './services/runner.ts';
import { HookLauncher } from './services/launcher.ts';
import { HookStats } from './services/stats.ts';
import { PluginStore } from './services/store.ts';
import { pluginRoutes } from './routes/plugins.ts';
import { manageRoutes } from './routes/manage.ts';

type Config = PluginsConfig & { context_engine: ContextEngineConfig };

const SWEEP_MS = 10_000;

export default defineModule<Config>({
  configSchema: pluginsConfigSchema,
  events: [pluginEvents],
  configKeys: { context_engine: contextEngineSchema },
  register(ctx) {
    const config = () => ctx.config;
    const pluginsDir = () => ctx.config.dir || path.join(ctx.home, 'plugins');
    // One folder per process: several processes (a fleet's nodes) share the data directory.
    const runBase = path.join(ctx.dataDir, 'run');
    const runRoot = path.join(runBase, ctx.nodes.id);
    let isolation: Isolation = { method: 'none', network: false, pid: false, reason: 'not probed yet' };
    // The probe runs beside start-up (it starts processes); every hook waits for it, so none runs less isolated.
    let isolationProbed: Promise<unknown> = Promise.resolve();
    const signer = () => ctx.tryUse(manifestSigner);
    const storeDeps = { launchers: () => ctx.config.launchers, signer };
    const store = new PluginStore({ ...storeDeps, dir: pluginsDir });
    const pool = new ProcessPool(() => ctx.config.max_spare_processes);
    const stats = new HookStats();
    const launcher = new HookLauncher(path.join(ctx.dir, 'spawner', 'spawner.cjs'), ctx.log);
    const runner = new HookRunner({
      launcher,
      pool,
      stats,
      isolation: () => isolation,
      isolationProbed: () => isolationProbed,
      runRoot: () => runRoot,
      timeoutSecs: () => ctx.config.hook_timeout_secs,
      maxOutputBytes: () => ctx.config.max_output_bytes,
    });
    const engine = new ContextEngineService({
      store,
      runner,
      engineConfig: () => ctx.config.context_engine,
      config,
      sessions: () => ctx.tryUse(sessionStore),
      scanner: () => ctx.tryUse(promptScanner),
      events: ctx.events.of(pluginEvents),
      log: ctx.log,
    });
    ctx.provide(contextEngine, {
      plugins: () =>
        store.list().map((p) => ({
          name: p.name,
          version: p.manifest?.version ?? '',
          description: p.manifest?.description ?? '',
          runtime: p.runtime,
          hooks: Object.keys(p.manifest?.hooks ?? {}) as HookName[],
          enabled: p.enabled,
          status: p.status,
          error: p.error,
        })),
      stackFor: (agentId) => {
        const agent = ctx.tryUse(agentRegistry)?.get(agentId);
        return agent ? engine.stackFor(agent).map((p) => p.name) : [];
      },
    });

    const hooks = ctx.hooks.tap(agentHooks);
    hooks.beforeTurn.tapPromise('context-plugins', (info) => engine.beforeTurn(info));
    hooks.beforeModelCall.tapPromise('context-plugins', (call) => engine.beforeModelCall(call));
    hooks.toolResult.tapPromise('context-plugins', (output, info) => engine.toolResult(output, info));
    hooks.afterTurn.tapPromise('context-plugins', (record) => engine.afterTurn(record));
    const parentOf = (id: string | undefined) => (id ? ctx.tryUse(agentRegistry)?.get(id) : undefined);
    hooks.agentSpawned.tap('context-plugins', (agent) => engine.subagent('prepare_subagent', agent, parentOf(agent.parentId)));
    hooks.agentTerminated.tap('context-plugins', (agent) => engine.subagent('merge_subagent', agent, parentOf(agent.parentId)));

    const app: PluginsApp = {
      store,
      runner,
      launcher,
      pool,
      stats,
      engine,
      pluginsDir,
      config,
      isolation: () => isolation,
      isolationProbed: () => isolationProbed,
      sandbox: () => ctx.use(sandboxService),
      signer,
      registry: () => ctx.tryUse(registryService),
      install: {
        store,
        pluginsDir,
        stagingDir: () => path.join(ctx.dataDir, 'staging'),
        installRoots: () => ctx.config.install_roots,
        home: ctx.home,
        limits: () => ({ maxFiles: ctx.config.max_plugin_files, maxBytes: ctx.config.max_plugin_bytes }),
        registry: () => ctx.tryUse(registryService),
        artifacts: () => ctx.tryUse(artifactService),
        stagingStore: (dir) => new PluginStore({ ...storeDeps, dir: () => dir }),
      },
    };

    return {
      async start() {
        // Private folders of hook processes left by processes that are gone (a crash) go first; live ones keep theirs.
        const live = new Set(await ctx.nodes.live());
        for (const name of existsSync(runBase) ? readdirSync(runBase) : [])
          if (!live.has(name)) rmSync(path.join(runBase, name), { recursive: true, force: true });
        mkdirSync(runRoot, { recursive: true });
        isolationProbed = probeIsolation(ctx.config.isolation === 'auto').then((found) => {
          isolation = found;
          ctx.log.info({ isolation: found.method, reason: found.reason }, 'plugin hook isolation probed');
        });
        const count = store.loadAll();
        ctx.log.info({ plugins: count, context_engine: engine.configured() }, 'plugins loaded');
        ctx.setInterval(() => pool.sweep(ctx.config.persistent_idle_secs * 1000), SWEEP_MS);
      },
      stop: () => {
        pool.stopAll();
        launcher.stop();
      },
      routes(app_) {
        pluginRoutes(app_, app);
        manageRoutes(app_, app);
      },
    };
  },
});
