/**
 * Which driver serves a request. Named: it must exist (400), have the capability at all (400), be configured (422
 * naming its key) and offer it on this host (422 saying what to install). Not named: the first configured driver
 * offering the capability in the registry's order; none is a 422 naming the capability and how to configure one.
 */
import { HttpError, badRequest } from '@talon/module-sdk';
import type { Logger } from 'pino';
import type { MediaCapability, MediaDriver } from '@talon/media';
import { CAPABILITY_METHOD, state, type DriverRegistry } from './drivers.ts';

const unprocessable = (message: string) => new HttpError(422, message);

/** `keyOf`: the catalogue's env var of a provider, named in the 422 even when the driver's hint forgets it. */
export function chooseDriver(
  registry: DriverRegistry,
  capability: MediaCapability,
  provider: string | undefined,
  keyOf: (name: string) => string | undefined,
  log: Logger,
): MediaDriver {
  const drivers = registry.ordered();
  if (provider !== undefined) return named(drivers, capability, provider, keyOf, log);
  for (const driver of drivers) {
    const s = state(driver, log);
    if (s.configured && s.capabilities.includes(capability)) return driver;
  }
  const able = drivers.filter((d) => typeof d[CAPABILITY_METHOD[capability]] === 'function');
  const how = able.length
    ? able.map((d) => `${d.name}: ${hint(d.name, state(d, log).setup, keyOf)}`).join('; ')
    : 'no media driver module that offers it is running (see docs/media.md)';
  throw unprocessable(`no configured media provider offers ${capability}: ${how}`);
}

function named(drivers: MediaDriver[], capability: MediaCapability, provider: string, keyOf: (name: string) => string | undefined, log: Logger): MediaDriver {
  const driver = drivers.find((d) => d.name === provider);
  if (!driver) throw badRequest(`provider: unknown media provider '${provider}' (known: ${drivers.map((d) => d.name).join(', ') || 'none'})`);
  const s = state(driver, log);
  if (typeof driver[CAPABILITY_METHOD[capability]] !== 'function') {
    throw badRequest(`provider: media provider '${provider}' does not offer ${capability} (it offers ${s.capabilities.join(', ') || 'nothing here'})`);
  }
  if (!s.configured) throw unprocessable(`media provider '${provider}' is not configured: ${hint(provider, s.setup, keyOf)}`);
  if (!s.capabilities.includes(capability))
    throw unprocessable(`media provider '${provider}' cannot offer ${capability} on this host: ${hint(provider, s.setup, keyOf)}`);
  return driver;
}

/**
 * What to set or install for a driver: its setup hint (`state(driver).setup`), with the catalogue's env var added
 * when the hint does not name it; '' for nothing.
 */
export function setupText(name: string, setup: string, keyOf: (name: string) => string | undefined): string {
  const text = setup.trim();
  const key = keyOf(name);
  if (!key || text.includes(key)) return text;
  const keyHint = `set ${key} or POST /api/providers/${name}/key`;
  return text ? `${text} (${keyHint})` : keyHint;
}

/** The setup text for a refusal, which always says where to look. */
const hint = (name: string, setup: string, keyOf: (name: string) => string | undefined): string => setupText(name, setup, keyOf) || 'see docs/media.md';
