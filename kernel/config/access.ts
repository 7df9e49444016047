import type { ConfigAccess, KernelHooks } from '@talon/module-sdk';
import { readConfigFile } from './file.ts';
import { ConfigStore } from './store.ts';

/**
 * The configuration as modules see it (`ctx.kernel.config`): validate and
 * apply whole candidates; the config-api module edits the file itself.
 */
export function createConfigAccess(store: ConfigStore, hooks: KernelHooks, applied: () => void): ConfigAccess {
  const current = (path: string) =>
    path ? path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], store.redacted()) : undefined;
  return {
    file: store.file,
    schema: () => store.schema(),
    redacted: () => store.redacted(),
    raw: () => store.rawData(),
    read: () => readConfigFile(store.file),
    check: (raw) => store.validate(raw).warnings,
    async apply(raw, path) {
      const validated = store.validate(raw);
      const previous = current(path);
      const changed = store.adopt(raw, validated);
      applied();
      await hooks.config.changed.promise({ path, value: path ? current(path) : changed, previous });
      return { changed, restartRequired: changed.some((k) => ConfigStore.needsRestart(k)) };
    },
  };
}
