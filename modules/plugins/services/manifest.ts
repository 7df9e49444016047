/**
 * plugin.toml → PluginManifest: name, version, description, author, requirements (a dependency file), [hooks]
 * (script paths and, only inside that table, the hook settings), [env] (${VAR} expanded from the service's
 * environment), [[requires]] programs, [integrity] SHA-256 per file, [config.<key>] settings. Problems are
 * ManifestErrors naming the key.
 */
import { parse } from 'smol-toml';
import type { HookName } from '@talon/plugins';

export const HOOK_NAMES: readonly HookName[] = [
  'ingest',
  'after_turn',
  'bootstrap',
  'assemble',
  'compact',
  'transform_tool_result',
  'prepare_subagent',
  'merge_subagent',
];
export const PLUGIN_NAME = /^[A-Za-z0-9_-]{1,128}$/;
export type FailurePolicy = 'warn' | 'skip' | 'abort';

/** Settings a plugin may give in [hooks]; the reference reads them only there. */
export const HOOK_SETTINGS = [
  'runtime',
  'hook_timeout_secs',
  'on_hook_failure',
  'max_retries',
  'retry_delay_ms',
  'only_for_agent_ids',
  'allow_network',
  'allow_filesystem',
  'persistent_subprocess',
  'prewarm_subprocesses',
  'prespawn',
  'priority',
  'env_schema',
] as const;

export interface PluginManifest {
  name: string;
  version: string;
  description: string;
  author: string;
  /** Dependency file (requirements.txt, package.json…), relative. */
  requirements: string | null;
  hooks: Partial<Record<HookName, string>>;
  /** Keys of [hooks] that are neither a hook nor a setting. */
  unknownHooks: string[];
  runtime: string | null;
  hookTimeoutSecs: number | null;
  onHookFailure: FailurePolicy | null;
  maxRetries: number;
  retryDelayMs: number;
  onlyForAgentIds: string[];
  allowNetwork: boolean;
  allowFilesystem: boolean;
  persistent: boolean;
  /** One-shot hooks: start the process of the next call (per agent) as soon as a call ends. */
  prespawn: boolean;
  priority: number;
  env: Record<string, string>;
  envSchema: Record<string, { description: string; required: boolean }>;
  requires: Array<{ binary: string; install_hint: string }>;
  integrity: Record<string, string>;
  config: Record<string, { type: string; default: unknown; description: string }>;
  /** Hook settings written at the top level, where they are not read. */
  misplacedSettings: string[];
}

export class ManifestError extends Error {}

type Table = Record<string, unknown>;
const isTable = (v: unknown): v is Table => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
const bad = (key: string, what: string) => new ManifestError(`'${key}' must be ${what}`);

function str(v: unknown, key: string, fallback = ''): string {
  if (v === undefined) return fallback;
  if (typeof v !== 'string') throw bad(key, 'a string');
  return v;
}
function int(v: unknown, key: string, min: number, max: number): number | null {
  if (v === undefined) return null;
  const n = typeof v === 'bigint' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) throw bad(key, `an integer from ${min} to ${max}`);
  return n;
}
function flag(v: unknown, key: string): boolean {
  if (v === undefined) return false;
  if (typeof v !== 'boolean') throw bad(key, 'true or false');
  return v;
}
function table(v: unknown, key: string): Table {
  if (v === undefined) return {};
  if (!isTable(v)) throw bad(key, 'a table');
  return v;
}

/** `${VAR}` from the service's environment (empty when unset). */
const expand = (value: string, env: NodeJS.ProcessEnv) => value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => env[name] ?? '');

export function parseManifest(text: string, env: NodeJS.ProcessEnv = process.env): PluginManifest {
  let doc: Table;
  try {
    doc = parse(text) as Table;
  } catch (err) {
    throw new ManifestError(`plugin.toml does not parse: ${(err as Error).message.split('\n')[0]}`);
  }
  const name = str(doc.name, 'name');
  if (!PLUGIN_NAME.test(name)) throw new ManifestError(`'name' is missing or not letters, digits, '_' and '-' (at most 128): '${name}'`);
  const h = table(doc.hooks, 'hooks');
  const hooks: PluginManifest['hooks'] = {};
  const unknownHooks: string[] = [];
  for (const [key, value] of Object.entries(h)) {
    if ((HOOK_SETTINGS as readonly string[]).includes(key)) continue;
    if (!(HOOK_NAMES as readonly string[]).includes(key)) unknownHooks.push(key);
    else hooks[key as HookName] = str(value, `hooks.${key}`);
  }
  const policy = h.on_hook_failure === undefined ? null : str(h.on_hook_failure, 'hooks.on_hook_failure');
  if (policy !== null && !['warn', 'skip', 'abort'].includes(policy)) throw bad('hooks.on_hook_failure', "'warn', 'skip' or 'abort'");
  const only = h.only_for_agent_ids;
  if (only !== undefined && !(Array.isArray(only) && only.every((x) => typeof x === 'string'))) throw bad('hooks.only_for_agent_ids', 'a list of agent ids');
  const envTable = table(doc.env, 'env');
  const integrity = table(doc.integrity, 'integrity');
  const schema = table(h.env_schema, 'hooks.env_schema');
  return {
    name,
    version: str(doc.version, 'version', '0.0.0'),
    description: str(doc.description, 'description'),
    author: str(doc.author, 'author'),
    requirements: doc.requirements === undefined ? null : str(doc.requirements, 'requirements'),
    hooks,
    unknownHooks,
    runtime: h.runtime === undefined ? null : str(h.runtime, 'hooks.runtime'),
    hookTimeoutSecs: int(h.hook_timeout_secs, 'hooks.hook_timeout_secs', 1, 3600),
    onHookFailure: policy as FailurePolicy | null,
    maxRetries: int(h.max_retries, 'hooks.max_retries', 0, 3) ?? 0,
    retryDelayMs: int(h.retry_delay_ms, 'hooks.retry_delay_ms', 0, 10_000) ?? 500,
    onlyForAgentIds: (only as string[] | undefined) ?? [],
    allowNetwork: flag(h.allow_network, 'hooks.allow_network'),
    allowFilesystem: flag(h.allow_filesystem, 'hooks.allow_filesystem'),
    persistent: flag(h.persistent_subprocess, 'hooks.persistent_subprocess'),
    prespawn: flag(h.prespawn, 'hooks.prespawn'),
    priority: int(h.priority, 'hooks.priority', -1000, 1000) ?? 0,
    env: Object.fromEntries(Object.entries(envTable).map(([k, v]) => [k, expand(str(v, `env.${k}`), env)])),
    envSchema: Object.fromEntries(
      Object.entries(schema).map(([k, v]) => {
        const t = table(v, `hooks.env_schema.${k}`);
        return [k, { description: str(t.description, `hooks.env_schema.${k}.description`), required: flag(t.required, `hooks.env_schema.${k}.required`) }];
      }),
    ),
    requires: (Array.isArray(doc.requires) ? doc.requires : []).filter(isTable).map((r, i) => ({
      binary: str(r.binary, `requires[${i}].binary`),
      install_hint: str(r.install_hint, `requires[${i}].install_hint`),
    })),
    integrity: Object.fromEntries(Object.entries(integrity).map(([k, v]) => [k, str(v, `integrity.${k}`).toLowerCase()])),
    config: Object.fromEntries(
      Object.entries(table(doc.config, 'config')).map(([k, v]) => {
        const t = table(v, `config.${k}`);
        return [k, { type: str(t.type, `config.${k}.type`, 'string'), default: t.default ?? null, description: str(t.description, `config.${k}.description`) }];
      }),
    ),
    misplacedSettings: HOOK_SETTINGS.filter((k) => k in doc),
  };
}
