/**
 * Contract of the hub module: registries and the safe handling of what comes from them, for any module that
 * installs content (skills here; hands, plugins and MCP templates use the same kinds of folders).
 */
import { defineEvents, payload, serviceRef } from '@talon/module-sdk';

/** One item of a registry: a folder of the layout (skills/<name>/, agents/<name>/, hands/<id>/) or a file (mcp/<id>.toml). */
export interface RegistryEntry {
  kind: string;
  slug: string;
  name: string;
  description: string;
  version: string;
  author: string;
  tags: string[];
  category: string;
  downloads: number;
  /** SHA-256 of the archive, when an HTTP index names one. */
  sha256?: string;
}

export interface RegistryStatus {
  registry: 'hub' | 'hub-cn';
  url: string;
  /** The git commit, the index's version, or a folder's modification stamp. */
  revision: string | null;
  /** When the last successful sync finished. */
  synced_at: string | null;
  /** When the last sync was tried (successful or not): the next automatic one is due sync_interval_secs after it. */
  attempted_at?: string | null;
  /** True when the last sync failed and the answers come from the previous one (or from nothing). */
  offline: boolean;
  error?: string;
}

export interface RegistryService {
  /** Every entry of a kind ('skills', 'agents', 'hands', 'mcp', 'plugins'...), from the last sync (syncs first when stale). */
  entries(kind: string, registry?: 'hub' | 'hub-cn'): Promise<RegistryEntry[]>;
  status(registry?: 'hub' | 'hub-cn'): RegistryStatus;
  /** Copies (or downloads, checks and extracts) one entry into dest, an empty folder; rejects with HttpError 404/403. */
  stage(kind: string, slug: string, dest: string, registry?: 'hub' | 'hub-cn'): Promise<{ dir: string; entry: RegistryEntry }>;
  /** A file of an entry as text (the skill's SKILL.md...), or undefined. */
  readFile(kind: string, slug: string, file: string, registry?: 'hub' | 'hub-cn'): Promise<string | undefined>;
  /**
   * The text of a one-file entry (workflows/<id>.toml, mcp/<id>.toml; in an HTTP index, the item's `toml` field), or
   * undefined when there is none (a symbolic link is never followed). Rejects with HttpError 404 for an unknown entry.
   */
  readEntry(kind: string, slug: string, registry?: 'hub' | 'hub-cn'): Promise<string | undefined>;
  sync(registry?: 'hub' | 'hub-cn'): Promise<RegistryStatus>;
}

export const registryService = serviceRef<RegistryService>('hub.registries');

export const hubEvents = defineEvents('hub', {
  /** A registry synced successfully; `changed` when its revision differs from the one before. */
  'hub.synced': payload<{ registry: 'hub' | 'hub-cn'; revision: string | null; changed: boolean }>(),
});

export interface ExtractLimits {
  maxEntries: number;
  maxBytes: number;
  maxFileBytes: number;
  /** Extracted bytes per compressed byte. */
  maxRatio: number;
}

export interface ArtifactService {
  /** A shallow clone of an http(s) git URL into dest (SSRF rules on the host unless trusted). */
  clone(url: string, dest: string, options?: { trusted?: boolean }): Promise<void>;
  /** A download with the SSRF rules and a size cap. */
  download(url: string, options: { maxBytes: number; trusted?: boolean }): Promise<Buffer>;
  /** A .tar.gz into dest: files and folders only (no links), no path leaving dest, bounded by the limits. */
  extract(archive: Buffer, dest: string, limits: ExtractLimits): Promise<void>;
}

export const artifactService = serviceRef<ArtifactService>('hub.artifacts');
