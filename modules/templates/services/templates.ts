/**
 * Agent templates from three places, first name wins: $TALON_HOME/templates (<name>.toml or <name>/agent.toml,
 * the operator's own), the bundled set, and the hub registry's agents (only once the registry has been synced:
 * listing templates never starts a download).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'smol-toml';
import type { RegistryService } from '@talon/hub';

export interface TemplateSource {
  name: string;
  source: 'user' | 'bundled' | 'registry';
  read: () => Promise<string>;
}

export const NAME_RE = /^[A-Za-z0-9_-]{1,64}$/;

function folderTemplates(dir: string, source: 'user' | 'bundled'): TemplateSource[] {
  if (!existsSync(dir)) return [];
  const out: TemplateSource[] = [];
  for (const entry of readdirSync(dir).sort()) {
    const full = path.join(dir, entry);
    const file = entry.endsWith('.toml') ? full : path.join(full, 'agent.toml');
    const name = entry.replace(/\.toml$/, '');
    if (NAME_RE.test(name) && existsSync(file) && statSync(file).isFile()) out.push({ name, source, read: async () => readFileSync(file, 'utf8') });
  }
  return out;
}

export async function allTemplates(userDir: string, bundledDir: string, registry: RegistryService | undefined): Promise<TemplateSource[]> {
  const list = [...folderTemplates(userDir, 'user'), ...folderTemplates(bundledDir, 'bundled')];
  if (registry && registry.status().revision !== null) {
    try {
      for (const e of await registry.entries('agents')) {
        if (NAME_RE.test(e.slug))
          list.push({ name: e.slug, source: 'registry', read: async () => (await registry.readFile('agents', e.slug, 'agent.toml')) ?? '' });
      }
    } catch {
      // the registry is unreadable: the local templates still list
    }
  }
  const seen = new Set<string>();
  return list.filter((t) => !seen.has(t.name) && seen.add(t.name));
}

export interface ManifestView {
  name: string;
  description: string;
  module?: string;
  tags: string[];
  profile?: string;
  model: { provider: string; model: string };
  capabilities: { tools: string[]; network: string[] };
}

/** The fields a client shows; a template whose TOML does not parse is reported, never a 500. */
export function manifestView(toml: string): { manifest?: ManifestView; error?: string } {
  try {
    const doc = parse(toml) as Record<string, unknown>;
    const model = (doc.model ?? {}) as Record<string, unknown>;
    const caps = (doc.capabilities ?? {}) as Record<string, unknown>;
    const list = (v: unknown) => (Array.isArray(v) ? v.map(String) : typeof v === 'string' ? [v] : []);
    return {
      manifest: {
        name: String(doc.name ?? ''),
        description: String(doc.description ?? ''),
        ...(typeof doc.module === 'string' && { module: doc.module }),
        tags: list(doc.tags),
        ...(typeof doc.profile === 'string' && { profile: doc.profile }),
        model: { provider: String(model.provider ?? 'default'), model: String(model.model ?? model.name ?? 'default') },
        capabilities: { tools: list(caps.tools), network: list(caps.network) },
      },
    };
  } catch (err) {
    return { error: (err as Error).message.split('\n')[0] };
  }
}
