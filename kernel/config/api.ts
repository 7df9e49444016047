import type { Logger } from 'pino';
import { HttpError, type ConfigApi, type KernelHooks } from '@talon/module-sdk';
import { ConfigError, ConfigStore } from './store.ts';

export interface ConfigApiDeps {
  store: ConfigStore;
  hooks: KernelHooks;
  log: () => Logger;
  /** Applies settings the kernel uses live (the log level). */
  applyLive: () => void;
}

/**
 * The run-time face of the configuration (GET/POST /api/config/*): a change is
 * validated in full first, then persisted, applied and announced through the
 * config-changed hook. An invalid change is a 400 and changes nothing.
 */
export function createConfigApi({ store, hooks, log, applyLive }: ConfigApiDeps): ConfigApi {
  const clientError = (err: unknown): never => {
    if (err instanceof ConfigError) throw new HttpError(400, err.message.replace(`${store.file}: `, ''));
    throw err;
  };
  return {
    file: store.file,
    effective: () => store.effective(),
    redacted: () => store.redacted(),
    schema: () => store.schema(),
    async set(key, value) {
      let change;
      try {
        const prepared = store.prepareSet(key);
        change = { segments: prepared.segments, validated: prepared.check(value) };
      } catch (err) {
        return clientError(err);
      }
      const previous = store.commitSet(change.segments, value, change.validated);
      applyLive();
      await hooks.config.changed.promise({ path: key, value, previous });
      log().info({ key }, 'configuration value changed');
      return { path: key, value, restartRequired: ConfigStore.needsRestart(key) };
    },
    async reload() {
      let read;
      try {
        read = store.readAgain();
      } catch (err) {
        return clientError(err);
      }
      const before = store.effective();
      const changed = store.adopt(read.raw, read.validated);
      for (const warning of read.validated.warnings) log().warn(warning);
      applyLive();
      await hooks.config.changed.promise({ path: '', value: store.effective(), previous: before });
      log().info({ changed }, 'configuration reloaded');
      return { changed };
    },
  };
}
