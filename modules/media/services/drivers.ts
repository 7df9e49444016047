/**
 * The media drivers the running driver modules registered (mediaHooks.drivers), created once per factory (a driver
 * module's copy: a reload brings a new factory and so a new driver), in the order a request without `provider` tries
 * them: [media] provider_order first, then providers of the model catalogue in its order, then others, `local` last.
 */
import type { Logger } from 'pino';
import type { MediaCapability, MediaDriver, MediaDriverFactory, MediaDriverKit } from '@talon/media';

export interface DriverRegistryDeps {
  factories: () => MediaDriverFactory[];
  kit: MediaDriverKit;
  /** [media] provider_order. */
  order: () => readonly string[];
  /** Provider names of the model catalogue, in its order. */
  catalogue: () => readonly string[];
  log: Logger;
}

export interface DriverRegistry {
  /** Every running driver, in the order of the automatic choice. */
  ordered(): MediaDriver[];
  find(name: string): MediaDriver | undefined;
}

export function createDriverRegistry(deps: DriverRegistryDeps): DriverRegistry {
  const created = new WeakMap<MediaDriverFactory, MediaDriver>();
  const failed = new WeakSet<MediaDriverFactory>();
  const driverOf = (factory: MediaDriverFactory): MediaDriver | undefined => {
    let driver = created.get(factory);
    if (driver || failed.has(factory)) return driver;
    try {
      driver = factory.create(deps.kit);
      created.set(factory, driver);
    } catch (err) {
      // Logged once per copy of the driver module; the other providers go on.
      failed.add(factory);
      deps.log.error({ err, provider: factory.name }, 'media driver could not be created');
    }
    return driver;
  };
  const all = (): MediaDriver[] => {
    const seen = new Set<string>();
    // The first registration of a name wins (a duplicate is a mistake in a module; it is not allowed to take over).
    return deps
      .factories()
      .map(driverOf)
      .filter((d): d is MediaDriver => d !== undefined && !seen.has(d.name) && Boolean(seen.add(d.name)));
  };
  return {
    ordered: () => orderDrivers(all(), deps.order(), deps.catalogue()),
    find: (name) => all().find((d) => d.name === name),
  };
}

/** provider_order's names first (in its order), then the catalogue's, then the rest by name; `local` last unless listed. */
export function orderDrivers(drivers: MediaDriver[], order: readonly string[], catalogue: readonly string[]): MediaDriver[] {
  const rank = (d: MediaDriver): [number, number, string] => {
    const listed = order.indexOf(d.name);
    if (listed >= 0) return [0, listed, ''];
    if (d.name === 'local') return [3, 0, ''];
    const known = catalogue.indexOf(d.name);
    return known >= 0 ? [1, known, ''] : [2, 0, d.name];
  };
  return [...drivers].sort((a, b) => {
    const [x, y] = [rank(a), rank(b)];
    return x[0] - y[0] || x[1] - y[1] || x[2].localeCompare(y[2]);
  });
}

/** The driver method each capability needs: a driver without it never offers the capability. */
export const CAPABILITY_METHOD: Record<MediaCapability, keyof MediaDriver> = {
  ImageGeneration: 'generateImage',
  TextToSpeech: 'synthesize',
  Transcription: 'transcribe',
  MusicGeneration: 'generateMusic',
  VideoGeneration: 'submitVideo',
};

/** A driver's answers, a throwing driver counting as not configured and offering nothing. */
export function state(driver: MediaDriver, log: Logger): { configured: boolean; capabilities: MediaCapability[]; setup: string } {
  const safe = <T>(read: () => T, fallback: T): T => {
    try {
      return read();
    } catch (err) {
      log.warn({ err, provider: driver.name }, 'media driver failed to report its state');
      return fallback;
    }
  };
  const capabilities = safe(() => driver.capabilities(), []).filter((c) => typeof driver[CAPABILITY_METHOD[c]] === 'function');
  return { configured: safe(() => driver.configured(), false), capabilities, setup: safe(() => driver.setupHint(), '') };
}
