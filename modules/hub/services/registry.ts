/**
 * One registry (the hub's, or the hub-cn mirror's). Three forms: an absolute folder in the registry layout (read in
 * place), a git repository (a shallow clone kept under the data folder and replaced whole at each sync), or an
 * HTTP index (index.json listing entries with their archive and SHA-256). A failed sync keeps the last good copy,
 * so reads work offline; the status says so.
 */
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, cpSync } from 'node:fs';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { badRequest, forbidden, notFound } from '@talon/module-sdk';
import type { ArtifactService, RegistryEntry, RegistryStatus } from '@talon/hub';
import type { SkillStore } from '@talon/skills';
import { createHash } from 'node:crypto';
import { safeGit } from './artifacts.ts';

export type Form = 'folder' | 'git' | 'index';

export interface RegistryDeps {
  name: 'hub' | 'hub-cn';
  url: () => string;
  cacheDir: string;
  intervalMs: () => number;
  maxArchiveBytes: () => number;
  artifacts: ArtifactService;
  skills: () => SkillStore;
  /** After each successful sync, with whether the revision changed. */
  onSynced?: (status: RegistryStatus, changed: boolean) => void;
}

interface IndexFile {
  version?: string;
  [kind: string]: unknown;
}

export function formOf(url: string): Form {
  if (path.isAbsolute(url)) return existsSync(path.join(url, '.git')) && !existsSync(path.join(url, 'skills')) ? 'git' : 'folder';
  return /\.json(\?.*)?$/.test(url) ? 'index' : 'git';
}

export class Registry {
  private state: RegistryStatus;
  private cached?: { revision: string | null; entries: Map<string, RegistryEntry[]>; index?: IndexFile };
  private syncing?: Promise<RegistryStatus>;

  constructor(private readonly deps: RegistryDeps) {
    this.state = this.readState() ?? { registry: deps.name, url: deps.url(), revision: null, synced_at: null, offline: false };
  }

  status(): RegistryStatus {
    return { ...this.state, url: this.deps.url() };
  }

  async entries(kind: string): Promise<RegistryEntry[]> {
    await this.fresh();
    if (!this.cached || this.cached.revision !== this.state.revision) this.cached = { revision: this.state.revision, entries: new Map() };
    let list = this.cached.entries.get(kind);
    if (!list) {
      list = this.form() === 'index' ? this.indexEntries(kind) : this.folderEntries(kind);
      this.cached.entries.set(kind, list);
    }
    return list;
  }

  async find(kind: string, slug: string): Promise<RegistryEntry> {
    const entry = (await this.entries(kind)).find((e) => e.slug === slug || e.name === slug);
    if (!entry) throw notFound(`'${slug}' is not in the ${this.deps.name} registry (${kind})`);
    return entry;
  }

  async stage(kind: string, slug: string, dest: string): Promise<{ dir: string; entry: RegistryEntry }> {
    const entry = await this.find(kind, slug);
    if (this.form() !== 'index') {
      const src = path.join(this.root(), kind, entry.slug);
      cpSync(src, dest, { recursive: true, verbatimSymlinks: true });
      return { dir: dest, entry };
    }
    const item = this.indexItems(kind).find((i) => i.slug === entry.slug);
    if (!item?.archive) throw notFound(`the index names no archive for '${slug}'`);
    const archive = await this.deps.artifacts.download(new URL(item.archive, this.deps.url()).toString(), {
      maxBytes: this.deps.maxArchiveBytes(),
      trusted: true,
    });
    const digest = createHash('sha256').update(archive).digest('hex');
    if (entry.sha256 && entry.sha256.toLowerCase() !== digest)
      throw forbidden(`the archive of '${slug}' does not match the SHA-256 the index gives (got ${digest})`);
    await this.deps.artifacts.extract(archive, dest, { maxEntries: 1000, maxBytes: 50 * 1024 * 1024, maxFileBytes: 10 * 1024 * 1024, maxRatio: 100 });
    return { dir: singleFolder(dest), entry };
  }

  async readEntry(kind: string, slug: string): Promise<string | undefined> {
    const entry = await this.find(kind, slug);
    if (this.form() === 'index') {
      const toml = this.indexItems(kind).find((i) => i.slug === entry.slug)?.toml;
      return typeof toml === 'string' ? toml : undefined;
    }
    const file = path.join(this.root(), kind, `${entry.slug}.toml`);
    // A cloned repository may hold a link pointing anywhere on this machine: only plain files are read.
    return existsSync(file) && lstatSync(file).isFile() ? readFileSync(file, 'utf8') : undefined;
  }

  async readFile(kind: string, slug: string, file: string): Promise<string | undefined> {
    const entry = await this.find(kind, slug);
    if (this.form() === 'index') return undefined;
    const full = path.join(this.root(), kind, entry.slug, file);
    return existsSync(full) && statSync(full).isFile() ? readFileSync(full, 'utf8') : undefined;
  }

  sync(): Promise<RegistryStatus> {
    this.syncing ??= this.doSync().finally(() => (this.syncing = undefined));
    return this.syncing;
  }

  /**
   * Syncs first when nothing was ever tried, when the configured URL changed, or when the last try (even a failed one: the network may be back) is
   * older than the interval. A failure keeps the last good copy, so a read never waits on a dead network twice in
   * one interval.
   */
  private async fresh(): Promise<void> {
    const interval = this.deps.intervalMs();
    const tried = this.state.attempted_at ?? this.state.synced_at;
    const moved = this.state.url !== this.deps.url();
    if (!tried || moved || (interval > 0 && Date.now() - Date.parse(tried) > interval)) await this.sync();
  }

  private async doSync(): Promise<RegistryStatus> {
    const url = this.deps.url();
    const now = () => new Date().toISOString();
    const before = this.state.revision;
    try {
      const revision = await this.fetchSnapshot(url);
      const at = now();
      this.state = { registry: this.deps.name, url, revision, synced_at: at, attempted_at: at, offline: false };
      // A folder keeps its revision when only files below its top level change: a sync always reads it again.
      this.cached = undefined;
    } catch (err) {
      this.state = { ...this.state, url, offline: true, error: (err as Error).message, attempted_at: now() };
    }
    this.writeState();
    if (!this.state.offline) this.deps.onSynced?.(this.status(), this.state.revision !== before);
    return this.status();
  }

  private async fetchSnapshot(url: string): Promise<string> {
    const form = this.form();
    if (form === 'folder') {
      if (!existsSync(url) || !statSync(url).isDirectory()) throw badRequest(`registry folder '${url}' does not exist`);
      return `folder:${statSync(url).mtimeMs}`;
    }
    mkdirSync(this.deps.cacheDir, { recursive: true });
    if (form === 'index') {
      const body = await this.deps.artifacts.download(url, { maxBytes: this.deps.maxArchiveBytes(), trusted: true });
      const doc = JSON.parse(body.toString('utf8')) as IndexFile;
      writeFileSync(path.join(this.deps.cacheDir, 'index.json'), JSON.stringify(doc));
      return String(doc.version ?? createHash('sha256').update(body).digest('hex').slice(0, 12));
    }
    const next = path.join(this.deps.cacheDir, `repo-${Date.now()}`);
    await this.deps.artifacts.clone(url, next, { trusted: true });
    const repo = path.join(this.deps.cacheDir, 'repo');
    rmSync(`${repo}-old`, { recursive: true, force: true });
    if (existsSync(repo)) renameSync(repo, `${repo}-old`);
    renameSync(next, repo);
    rmSync(`${repo}-old`, { recursive: true, force: true });
    return (await safeGit(10_000, repo).revparse(['HEAD'])).trim();
  }

  private form(): Form {
    return formOf(this.deps.url());
  }

  /** Where a folder-layout snapshot lives. */
  private root(): string {
    return this.form() === 'folder' ? this.deps.url() : path.join(this.deps.cacheDir, 'repo');
  }

  private folderEntries(kind: string): RegistryEntry[] {
    const dir = path.join(this.root(), kind);
    if (!existsSync(dir)) return [];
    const out: RegistryEntry[] = [];
    for (const name of readdirSync(dir).sort()) {
      if (name.startsWith('.') || name === 'README.md') continue;
      const entry = describe(kind, path.join(dir, name), name, this.deps.skills);
      if (entry) out.push(entry);
    }
    return out;
  }

  private indexItems(kind: string): Array<Partial<RegistryEntry> & { slug: string; archive?: string; toml?: unknown }> {
    const file = path.join(this.deps.cacheDir, 'index.json');
    if (!existsSync(file)) return [];
    // Parsed once per sync (entries() keeps `cached` to the synced revision), not once per entry read.
    const read = () => JSON.parse(readFileSync(file, 'utf8')) as IndexFile;
    const doc = this.cached ? (this.cached.index ??= read()) : read();
    const items = doc[kind];
    return Array.isArray(items) ? items.filter((i): i is { slug: string } => typeof i?.slug === 'string') : [];
  }

  private indexEntries(kind: string): RegistryEntry[] {
    return this.indexItems(kind).map((i) => entryOf(kind, i.slug, i));
  }

  private readState(): RegistryStatus | undefined {
    try {
      return JSON.parse(readFileSync(path.join(this.deps.cacheDir, 'status.json'), 'utf8')) as RegistryStatus;
    } catch {
      return undefined;
    }
  }

  private writeState(): void {
    mkdirSync(this.deps.cacheDir, { recursive: true });
    writeFileSync(path.join(this.deps.cacheDir, 'status.json'), JSON.stringify(this.state));
  }
}

function entryOf(kind: string, slug: string, v: Partial<RegistryEntry>): RegistryEntry {
  const tags = Array.isArray(v.tags) ? v.tags.map(String) : [];
  return {
    kind,
    slug,
    name: String(v.name ?? slug),
    description: String(v.description ?? ''),
    version: String(v.version ?? '0.1.0'),
    author: String(v.author ?? ''),
    tags,
    category: String(v.category ?? tags[0] ?? 'general'),
    downloads: Number.isInteger(v.downloads) ? Number(v.downloads) : 0,
    ...(typeof v.sha256 === 'string' && { sha256: v.sha256 }),
  };
}

/** One folder or file of the layout → an entry; skills are parsed by the skills module, TOML kinds read here. */
function describe(kind: string, full: string, name: string, skills: () => SkillStore): RegistryEntry | undefined {
  try {
    if (kind === 'skills') {
      const s = skills().describe(full);
      return entryOf(kind, name, { ...s, category: s.category });
    }
    const file = statSync(full).isDirectory()
      ? ['agent.toml', 'HAND.toml', 'plugin.toml'].map((f) => path.join(full, f)).find(existsSync)
      : full.endsWith('.toml') && lstatSync(full).isFile()
        ? full
        : undefined;
    if (!file) return undefined;
    const doc = parseToml(readFileSync(file, 'utf8')) as Record<string, unknown>;
    const slug = statSync(full).isDirectory() ? name : name.replace(/\.toml$/, '');
    return entryOf(kind, slug, {
      ...(doc as Partial<RegistryEntry>),
      name: String(doc.name ?? doc.id ?? slug),
      category: String(doc.category ?? (Array.isArray(doc.tags) ? doc.tags[0] : 'general')),
    });
  } catch {
    return undefined;
  }
}

/** An archive holding one top folder is that folder. */
export function singleFolder(dir: string): string {
  const items = readdirSync(dir);
  return items.length === 1 && statSync(path.join(dir, items[0])).isDirectory() ? path.join(dir, items[0]) : dir;
}
