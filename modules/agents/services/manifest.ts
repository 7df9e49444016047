/**
 * agent.toml → AgentManifest. Lenient like the reference: unknown keys are
 * kept in `extra`, a scalar is accepted where a list is expected, and every
 * problem is a 400 that names the key.
 */
import { parse } from 'smol-toml';
import { badRequest } from '@talon/module-sdk';
import type { AgentManifest } from '@talon/agents';

type Table = Record<string, unknown>;

const TOP_KEYS = new Set(['name', 'version', 'description', 'author', 'module', 'tags', 'model', 'capabilities']);
const MODEL_KEYS = new Set(['provider', 'model', 'name', 'system_prompt', 'max_tokens', 'temperature', 'api_key_env', 'base_url']);
const CAP_LISTS = ['tools', 'network', 'memory_read', 'memory_write', 'shell'] as const;
const CAP_KEYS = new Set<string>([...CAP_LISTS, 'agent_spawn', 'max_llm_tokens_per_hour']);

export const DEFAULT_SYSTEM_PROMPT = 'You are a helpful AI agent.';

const invalid = (problem: string) => badRequest(`invalid manifest: ${problem}`);

export function parseManifest(text: string): AgentManifest {
  let doc: Table;
  try {
    doc = parse(text) as Table;
  } catch (err) {
    throw invalid((err as Error).message.split('\n')[0]);
  }
  const name = doc.name;
  if (name === undefined) throw invalid("missing required key 'name'");
  if (typeof name !== 'string' || name.trim() === '') throw invalid("'name' must be a non-empty string");
  if (name.length > 128) throw invalid("'name' is longer than 128 characters");

  const model = table(doc.model, 'model');
  const caps = table(doc.capabilities, 'capabilities');
  const resources = table(doc.resources, 'resources');
  const extra: Table = {};
  for (const [key, value] of Object.entries(doc)) if (!TOP_KEYS.has(key)) extra[key] = value;
  const modelExtra = pick(model, (k) => !MODEL_KEYS.has(k));
  const capExtra = pick(caps, (k) => !CAP_KEYS.has(k));
  if (Object.keys(modelExtra).length) extra.model = modelExtra;
  if (Object.keys(capExtra).length) extra.capabilities = capExtra;

  const capsOut: AgentManifest['capabilities'] = {
    tools: list(caps.tools, 'capabilities.tools'),
    network: list(caps.network, 'capabilities.network'),
    memory_read: list(caps.memory_read, 'capabilities.memory_read'),
    memory_write: list(caps.memory_write, 'capabilities.memory_write'),
    shell: list(caps.shell, 'capabilities.shell'),
  };
  const agentSpawn = optional(caps.agent_spawn, 'boolean', 'capabilities.agent_spawn');
  if (agentSpawn !== undefined) capsOut.agent_spawn = agentSpawn;
  // The spec puts the hourly cap under [capabilities], the reference under [resources]: read both.
  const hourly =
    tokensPerHour(caps.max_llm_tokens_per_hour, 'capabilities.max_llm_tokens_per_hour') ??
    tokensPerHour(resources.max_llm_tokens_per_hour, 'resources.max_llm_tokens_per_hour');
  if (hourly !== undefined) capsOut.max_llm_tokens_per_hour = hourly;

  const manifest: AgentManifest = {
    name: name.trim(),
    model: {
      provider: optional(model.provider, 'string', 'model.provider') || 'default',
      model: optional(model.model, 'string', 'model.model') || optional(model.name, 'string', 'model.name') || 'default',
    },
    capabilities: capsOut,
    extra,
  };
  assign(manifest, 'version', optional(doc.version, 'string', 'version'));
  assign(manifest, 'description', optional(doc.description, 'string', 'description'));
  assign(manifest, 'author', optional(doc.author, 'string', 'author'));
  assign(manifest, 'module', optional(doc.module, 'string', 'module'));
  if (doc.tags !== undefined) manifest.tags = list(doc.tags, 'tags');
  assign(manifest.model, 'system_prompt', optional(model.system_prompt, 'string', 'model.system_prompt'));
  assign(manifest.model, 'max_tokens', positiveInt(model.max_tokens, 'model.max_tokens'));
  assign(manifest.model, 'temperature', optional(model.temperature, 'number', 'model.temperature'));
  assign(manifest.model, 'api_key_env', optional(model.api_key_env, 'string', 'model.api_key_env'));
  assign(manifest.model, 'base_url', optional(model.base_url, 'string', 'model.base_url'));
  return manifest;
}

/** A list of strings; a lone string counts as a one-item list. */
export function list(value: unknown, key: string): string[] {
  if (value === undefined) return [];
  if (typeof value === 'string') return [value];
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value as string[];
  throw invalid(`'${key}' must be a list of strings`);
}

/** A positive integer read from the manifest's extra tables ([autonomous] max_iterations...). */
export function extraNumber(extra: Table, tableName: string | undefined, key: string): number | undefined {
  const source = tableName ? extra[tableName] : extra;
  if (!source || typeof source !== 'object') return undefined;
  const value = (source as Table)[key];
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : undefined;
}

function table(value: unknown, key: string): Table {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid(`'${key}' must be a table`);
  return value as Table;
}

function pick(source: Table, keep: (key: string) => boolean): Table {
  return Object.fromEntries(Object.entries(source).filter(([k]) => keep(k)));
}

function optional(value: unknown, type: 'string', key: string): string | undefined;
function optional(value: unknown, type: 'number', key: string): number | undefined;
function optional(value: unknown, type: 'boolean', key: string): boolean | undefined;
function optional(value: unknown, type: 'string' | 'number' | 'boolean', key: string): unknown {
  if (value === undefined) return undefined;
  // smol-toml gives bigint for integers beyond 2^53 only when asked; numbers arrive as number.
  if (typeof value !== type) throw invalid(`'${key}' must be a ${type}`);
  return value;
}

function positiveInt(value: unknown, key: string): number | undefined {
  const n = optional(value, 'number', key);
  if (n !== undefined && (!Number.isInteger(n) || n <= 0)) throw invalid(`'${key}' must be a positive integer`);
  return n;
}

/** The same ceiling as the service-wide [usage] hourly_token_limit: a larger (or infinite) cap is a slip, not a choice. */
const MAX_TOKENS_PER_HOUR = 10_000_000_000;

function tokensPerHour(value: unknown, key: string): number | undefined {
  const n = optional(value, 'number', key);
  if (n !== undefined && (!Number.isInteger(n) || n < 0 || n > MAX_TOKENS_PER_HOUR))
    throw invalid(`'${key}' must be a whole number of tokens from 0 (unlimited) to ${MAX_TOKENS_PER_HOUR}`);
  return n;
}

function assign<T extends object, K extends keyof T>(target: T, key: K, value: T[K] | undefined): void {
  if (value !== undefined) target[key] = value;
}
