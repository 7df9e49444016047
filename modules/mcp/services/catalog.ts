/**
 * The MCP catalogue: installable server templates in the registry's
 * `mcp/<id>.toml` format (id, name, description, category, icon, tags,
 * setup_instructions, [transport], [[required_env]], [health_check]). Three
 * layers, a later one overriding an earlier id: the built-in templates shipped
 * in ../catalog (the offline default), the hub registry's (catalog-registry.ts),
 * and the folders and URLs of [mcp]. Each entry says where it comes from.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';

export interface RequiredEnv {
  name: string;
  label: string;
  help: string;
  is_secret: boolean;
  get_url: string;
}

export interface Template {
  id: string;
  name: string;
  description: string;
  category: string;
  icon: string;
  tags: string[];
  transport: { type: string; command?: string; args: string[]; url?: string };
  required_env: RequiredEnv[];
  setup_instructions: string;
  /** 'builtin', 'registry:hub', a folder path or a URL. */
  source: string;
}

const ID = /^[a-z0-9][a-z0-9_.-]{0,63}$/;
const MAX_REMOTE_BYTES = 1024 * 1024;
const REMOTE_TIMEOUT_MS = 10_000;

const str = (v: unknown, fallback = ''): string => (typeof v === 'string' ? v : fallback);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** A template from its parsed data; throws naming what is wrong. */
export function toTemplate(data: Record<string, unknown>, source: string): Template {
  const id = str(data.id);
  if (!ID.test(id)) throw new Error(`template id '${id}' is missing or not lower-case letters, digits, '_', '-', '.'`);
  const t = (data.transport ?? {}) as Record<string, unknown>;
  if (typeof t.type !== 'string') throw new Error(`template '${id}' has no [transport] type`);
  const health = (data.health_check ?? {}) as Record<string, unknown>;
  const required = Array.isArray(data.required_env) ? (data.required_env as Array<Record<string, unknown>>) : [];
  return {
    id,
    name: str(data.name, id),
    description: str(data.description),
    category: str(data.category, 'other'),
    icon: str(data.icon),
    tags: strings(data.tags),
    transport: {
      type: t.type,
      command: typeof t.command === 'string' ? t.command : undefined,
      args: strings(t.args),
      url: typeof t.url === 'string' ? t.url : undefined,
    },
    required_env: required.map((e) => ({
      name: str(e.name),
      label: str(e.label, str(e.name)),
      help: str(e.help),
      is_secret: e.is_secret !== false,
      get_url: str(e.get_url),
    })),
    // Registry files that write setup_instructions after [health_check] put it in that table: read it there too.
    setup_instructions: str(data.setup_instructions, str(health.setup_instructions)),
    source,
  };
}

function fromFolder(dir: string, onError: (where: string, err: Error) => void): Template[] {
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.toml'));
  } catch (err) {
    onError(dir, err as Error);
    return [];
  }
  const out: Template[] = [];
  for (const file of files.sort()) {
    const where = path.join(dir, file);
    try {
      out.push(toTemplate(parseToml(readFileSync(where, 'utf8')) as Record<string, unknown>, dir));
    } catch (err) {
      onError(where, err as Error);
    }
  }
  return out;
}

/** One template in TOML, or a JSON array of templates. */
async function fromUrl(url: string): Promise<Template[]> {
  const res = await fetch(url, { redirect: 'error', signal: AbortSignal.timeout(REMOTE_TIMEOUT_MS) });
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  const text = await res.text();
  if (text.length > MAX_REMOTE_BYTES) throw new Error(`larger than ${MAX_REMOTE_BYTES} bytes`);
  let list: unknown;
  try {
    list = JSON.parse(text);
  } catch {
    return [toTemplate(parseToml(text) as Record<string, unknown>, url)];
  }
  if (!Array.isArray(list)) throw new Error('JSON that is not an array of templates');
  return list.map((item) => toTemplate(item as Record<string, unknown>, url));
}

export class Catalog {
  private templates = new Map<string, Template>();
  private builtin: Template[] = [];
  private registry: Template[] = [];
  private configured: Template[] = [];

  constructor(
    private readonly builtinDir: string,
    private readonly onError: (where: string, err: Error) => void,
  ) {}

  list(): Template[] {
    return [...this.templates.values()].sort((a, b) => a.id.localeCompare(b.id));
  }

  get(id: string): Template | undefined {
    return this.templates.get(id);
  }

  /** Reads the built-in templates and those of [mcp] again (the registry's stay); returns the number of templates. */
  async load(dirs: readonly string[], urls: readonly string[]): Promise<number> {
    const configured: Template[] = [];
    for (const dir of dirs) configured.push(...fromFolder(dir, this.onError));
    for (const url of urls) {
      try {
        configured.push(...(await fromUrl(url)));
      } catch (err) {
        this.onError(url, err as Error);
      }
    }
    this.builtin = fromFolder(this.builtinDir, this.onError).map((t) => ({ ...t, source: 'builtin' }));
    this.configured = configured;
    return this.merge();
  }

  /** Puts the registry's templates in place of the ones it gave before; returns the number of templates. */
  setRegistry(templates: Template[]): number {
    this.registry = templates;
    return this.merge();
  }

  registryCount(): number {
    return this.registry.length;
  }

  private merge(): number {
    const next = new Map<string, Template>();
    for (const t of [...this.builtin, ...this.registry, ...this.configured]) next.set(t.id, t);
    this.templates = next;
    return next.size;
  }
}
