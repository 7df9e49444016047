/** What the routes reach: the module's parts, built once in register(). */
import type { ManifestSigner } from '@talon/manifest-signing';
import type { RegistryService } from '@talon/hub';
import type { SandboxService } from '@talon/tools';
import type { PluginsConfig } from '../config.ts';
import type { ContextEngineService } from './engine.ts';
import type { InstallDeps } from './install.ts';
import type { Isolation } from './isolation.ts';
import type { HookLauncher } from './launcher.ts';
import type { ProcessPool } from './pool.ts';
import type { HookRunner } from './runner.ts';
import type { HookStats } from './stats.ts';
import type { PluginStore } from './store.ts';

export interface PluginsApp {
  store: PluginStore;
  runner: HookRunner;
  launcher: HookLauncher;
  pool: ProcessPool;
  stats: HookStats;
  engine: ContextEngineService;
  install: InstallDeps;
  pluginsDir: () => string;
  config: () => PluginsConfig;
  isolation: () => Isolation;
  isolationProbed: () => Promise<unknown>;
  sandbox: () => SandboxService;
  signer: () => ManifestSigner | undefined;
  registry: () => RegistryService | undefined;
}
