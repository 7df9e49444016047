/**
 * Reads a catalogue update from the configured registry: a folder of provider
 * TOML files (registry_dir) or a JSON bundle over http(s) (registry_url).
 * Everything is validated before anything is returned: one bad file rejects
 * the whole update, so the running catalogue is never half-replaced.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import { lazy } from '@talon/module-sdk';
import type { CatalogConfig } from '../config.ts';
import { checkProviderFile, loadAliasFile, loadProviderDir } from './files.ts';
import { excerpt, probe, ProbeError } from './http-probe.ts';
import { registryBundleSchema, type RegistryBundle } from './schema.ts';
import type { RegistryContent } from './store.ts';

/** Compiled with the first registry update, not at start-up (an Ajv instance of its own compiles the meta-schema too). */
const validateBundle = lazy(() => new Ajv({ allErrors: true, strict: false }).compile<RegistryBundle>(registryBundleSchema));

export class RegistryError extends Error {
  constructor(
    message: string,
    /** True when nothing is configured (a client error rather than a registry fault). */
    readonly notConfigured = false,
  ) {
    super(message);
    this.name = 'RegistryError';
  }
}

const hashOf = (value: unknown) => `sha256-${createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 12)}`;

/** A folder holding providers/ (+ aliases.toml, VERSION), or the provider files themselves. */
function fromDir(dir: string): RegistryContent {
  if (!existsSync(dir)) throw new RegistryError(`registry_dir ${dir} does not exist`);
  const providersDir = existsSync(path.join(dir, 'providers')) ? path.join(dir, 'providers') : dir;
  const loaded = loadProviderDir(providersDir);
  if (loaded.errors.length) throw new RegistryError(`invalid registry file(s): ${loaded.errors.join(' | ')}`);
  if (!loaded.files.length) throw new RegistryError(`registry_dir ${providersDir} holds no provider files`);
  let aliases: Record<string, string>;
  try {
    aliases = loadAliasFile(path.join(dir, 'aliases.toml'));
  } catch (err) {
    throw new RegistryError(`invalid registry file: ${(err as Error).message}`);
  }
  const versionFile = path.join(dir, 'VERSION');
  const version = existsSync(versionFile) ? readFileSync(versionFile, 'utf8').trim() : hashOf({ providers: loaded.files, aliases });
  return { version: version || hashOf(loaded.files), source: dir, providers: loaded.files, aliases };
}

async function fromUrl(url: string, timeoutMs: number): Promise<RegistryContent> {
  let reply;
  try {
    reply = await probe(url, { timeoutMs, headers: { accept: 'application/json' }, follow: true });
  } catch (err) {
    throw new RegistryError(err instanceof ProbeError ? err.message : String(err));
  }
  if (reply.status !== 200) throw new RegistryError(`GET ${url} answered HTTP ${reply.status}: ${excerpt(reply.body)}`);
  const bundle = reply.body;
  const validate = validateBundle();
  if (!validate(bundle))
    throw new RegistryError(`registry bundle at ${url} is invalid: ${validate.errors?.map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ')}`);
  const providers = bundle.providers.map((p, i) => {
    try {
      return checkProviderFile(p, `providers[${i}]`);
    } catch (err) {
      throw new RegistryError(`registry bundle at ${url} is invalid: ${(err as Error).message}`);
    }
  });
  const aliases = bundle.aliases ?? {};
  return { version: bundle.version ?? hashOf({ providers, aliases }), source: url, providers, aliases };
}

export async function readRegistry(config: CatalogConfig, home: string): Promise<RegistryContent> {
  if (config.registry_dir) return fromDir(path.resolve(home, config.registry_dir));
  if (config.registry_url) return fromUrl(config.registry_url, config.registry_timeout_ms);
  throw new RegistryError('no registry configured: set registry_dir or registry_url in the [catalog] section', true);
}
