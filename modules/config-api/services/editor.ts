import { badRequest, isConfigError, type ConfigAccess } from '@talon/module-sdk';
import { persistValue, readText, writeAtomically } from './persist.ts';
import { setIn } from './toml.ts';

/** An invalid change is the client's: 400 naming the key and the problem (without the file's path). */
function clientError(config: ConfigAccess, err: unknown): never {
  if (isConfigError(err)) throw badRequest(err.message.replace(`${config.file}: `, ''));
  throw err;
}

/**
 * Editing config.toml at run time: a change is validated in full against the
 * whole file first, then written (comments kept), then applied; an invalid
 * change is a 400 and changes nothing.
 */
export function createEditor(config: ConfigAccess, share: (path: string, value: unknown) => Promise<void>) {
  return {
    /** `shared` false: a change another node made, applied here (see SharedChanges), is not shared again. */
    async set(path: string, value: unknown, shared = true): Promise<{ path: string; restartRequired: boolean }> {
      const segments = path.split('.').map((s) => s.trim());
      if (!path || segments.some((s) => !s)) throw badRequest(`invalid key path '${path}'`);
      const candidate = setIn(config.raw(), segments, value);
      try {
        const unknownHere = config.check(candidate).find((w) => w.startsWith(`unknown configuration key '${segments.join('.')}'`));
        if (unknownHere) throw badRequest(unknownHere.replace(' (ignored)', ''));
      } catch (err) {
        clientError(config, err);
      }
      const previous = readText(config.file);
      persistValue(config.file, segments, value);
      let restartRequired: boolean;
      try {
        ({ restartRequired } = await config.apply(candidate, segments.join('.')));
      } catch (err) {
        // Applying failed (a module switch that could not start, say): the file goes back to what it said.
        writeAtomically(config.file, previous);
        return clientError(config, err);
      }
      if (shared) await share(segments.join('.'), value);
      return { path: segments.join('.'), restartRequired };
    },
    /** The file as it is now; an unknown key is a warning here as at start-up (only POST /api/config/set refuses one). */
    async reload(): Promise<{ changed: string[]; warnings: string[] }> {
      try {
        const data = config.read();
        const warnings = config.check(data);
        const { changed } = await config.apply(data, '');
        return { changed, warnings };
      } catch (err) {
        return clientError(config, err);
      }
    },
  };
}
