/**
 * The loaded skills, in memory: bundled ones from the module folder, installed ones from the skills folder. A
 * folder that does not parse, breaks a rule or has a critical scan finding is not loaded and is listed as
 * blocked with the reason (never silently skipped). Every change bumps `generation` (prompt and tool caches key on it).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Finding, PromptScanner } from '@talon/prompt-guard';
import type { SkillOrigin, SkillSummary } from '@talon/skills';
import { readManifest, type SkillManifest } from './manifest.ts';
import { manifestProblems } from './validate.ts';
import { textFiles } from './tree.ts';
import type { SkillHistory, VersionRecord } from './history.ts';
import type { SkillsConfig } from '../config.ts';

export interface LoadedSkill {
  name: string;
  dir: string;
  bundled: boolean;
  manifest: SkillManifest;
  origin: SkillOrigin;
  contentHash: string;
  findings: Finding[];
  summary: SkillSummary;
}

export interface BlockedSkill {
  name: string;
  path: string;
  reason: string;
  findings: Finding[];
}

export type LoadOutcome = { ok: true; skill: LoadedSkill } | { ok: false; blocked: BlockedSkill };

export interface StoreDeps {
  bundledDir: string;
  userDir: () => string;
  config: () => SkillsConfig;
  scanner: () => PromptScanner;
  history: SkillHistory;
  log: Logger;
  onBlocked: (blocked: BlockedSkill) => void;
}

export const SOURCE_NAMES: Record<SkillOrigin['type'], string> = {
  bundled: 'Bundled',
  local: 'Local',
  git: 'Git',
  registry: 'Registry',
  hub: 'Hub',
  'hub-cn': 'HubCn',
};

export function contentHash(manifest: SkillManifest): string {
  return createHash('sha256').update(manifest.promptContext).digest('hex');
}

/** Reads one folder and decides whether it may load (parse, rules, scan). */
export function inspectFolder(dir: string, deps: Pick<StoreDeps, 'scanner' | 'config'>): { manifest: SkillManifest; findings: Finding[] } {
  const manifest = readManifest(dir);
  const problems = manifestProblems(manifest, dir);
  if (problems.length) throw new SkillRefused(problems.join('; '), []);
  const report = deps.scanner().scanFiles(textFiles(dir, 10 * 1024 * 1024));
  if (report.blocked) throw new SkillRefused(`the security scan refused it: ${deps.scanner().summary(report)}`, report.findings);
  return { manifest, findings: report.findings };
}

export class SkillRefused extends Error {
  constructor(
    message: string,
    readonly findings: Finding[],
  ) {
    super(message);
  }
}

export class SkillRegistry {
  private readonly skills = new Map<string, LoadedSkill>();
  private readonly blockedByPath = new Map<string, BlockedSkill>();
  generation = 0;

  constructor(private readonly deps: StoreDeps) {}

  get(name: string): LoadedSkill | undefined {
    return this.skills.get(name);
  }

  all(): LoadedSkill[] {
    return [...this.skills.values()];
  }

  blocked(): BlockedSkill[] {
    return [...this.blockedByPath.values()];
  }

  /**
   * Everything again: bundled first, then installed (an installed skill may not shadow a bundled one). The skills are
   * in place before their versions are recorded (one transaction for all).
   */
  async loadAll(): Promise<number> {
    this.skills.clear();
    this.blockedByPath.clear();
    mkdirSync(this.deps.userDir(), { recursive: true });
    const versions: VersionRecord[] = [];
    for (const dir of subfolders(this.deps.bundledDir)) this.place(dir, true, versions);
    for (const dir of subfolders(this.deps.userDir())) this.place(dir, false, versions);
    this.generation++;
    await this.deps.history.record(versions);
    return this.skills.size;
  }

  /** One installed folder again (after a change on disk, here or in another process): loaded, replaced, or gone. */
  async refreshFolder(dir: string): Promise<LoadOutcome | undefined> {
    for (const [name, skill] of this.skills) if (skill.dir === dir && !skill.bundled) this.skills.delete(name);
    this.blockedByPath.delete(dir);
    this.generation++;
    return existsSync(dir) && statSync(dir).isDirectory() ? this.loadFolder(dir, false) : undefined;
  }

  forget(name: string): void {
    this.skills.delete(name);
    this.generation++;
  }

  /** Loads one folder and records its version. */
  async loadFolder(dir: string, bundled: boolean, changelog?: string): Promise<LoadOutcome> {
    const versions: VersionRecord[] = [];
    const outcome = this.place(dir, bundled, versions, changelog);
    await this.deps.history.record(versions);
    return outcome;
  }

  /** Reads one folder and, when it may load, puts it in place; its version goes to `versions`, to be recorded. */
  private place(dir: string, bundled: boolean, versions: VersionRecord[], changelog?: string): LoadOutcome {
    const folderName = path.basename(dir);
    if (this.deps.config().disabled.includes(folderName)) return this.block(dir, folderName, 'disabled in [skills] disabled', []);
    let inspected: { manifest: SkillManifest; findings: Finding[] };
    try {
      inspected = inspectFolder(dir, this.deps);
    } catch (err) {
      return this.block(dir, folderName, (err as Error).message, err instanceof SkillRefused ? err.findings : []);
    }
    const { manifest, findings } = inspected;
    if (this.deps.config().disabled.includes(manifest.name)) return this.block(dir, manifest.name, 'disabled in [skills] disabled', []);
    const clash = this.skills.get(manifest.name);
    if (clash && clash.dir !== dir) return this.block(dir, manifest.name, `a skill named '${manifest.name}' is already loaded from ${clash.dir}`, []);
    const origin: SkillOrigin = bundled ? { type: 'bundled' } : (this.deps.history.origin(manifest.name) ?? { type: 'local' });
    const hash = contentHash(manifest);
    versions.push({
      name: manifest.name,
      version: manifest.version,
      contentHash: hash,
      changelog: changelog ?? (bundled ? 'Bundled with the service' : 'Loaded from the skills folder'),
    });
    const skill: LoadedSkill = { name: manifest.name, dir, bundled, manifest, origin, contentHash: hash, findings, summary: summaryOf(manifest, origin) };
    this.skills.set(skill.name, skill);
    this.generation++;
    return { ok: true, skill };
  }

  private block(dir: string, name: string, reason: string, findings: Finding[]): LoadOutcome {
    const blocked: BlockedSkill = { name, path: dir, reason, findings };
    this.blockedByPath.set(dir, blocked);
    this.deps.log.warn({ skill: name, path: dir, reason }, 'skill not loaded');
    this.deps.onBlocked(blocked);
    return { ok: false, blocked };
  }
}

export function summaryOf(m: SkillManifest, origin: SkillOrigin): SkillSummary {
  return {
    name: m.name,
    version: m.version,
    runtime: m.runtime,
    description: m.description,
    author: m.author,
    tags: m.tags,
    category: m.category,
    tools_count: m.tools.length,
    enabled: true,
    has_prompt_context: m.promptContext.length > 0,
    source: { type: origin.type, ...(origin.slug && { slug: origin.slug }), ...(origin.version && { version: origin.version }) },
  };
}

function subfolders(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
    .map((e) => path.join(dir, e.name))
    .sort();
}
