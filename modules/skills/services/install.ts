/**
 * The install pipeline every source goes through: resolve the source into a folder, copy it into the staging
 * area with the tree checks, parse, validate, scan, verify the signature when asked, then promote the copy into
 * the skills folder and load it. Nothing reaches the skills folder before every check passed.
 */
import { cpSync, existsSync, mkdtempSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HttpError, badRequest, conflict, forbidden, isInside, notFound } from '@talon/module-sdk';
import type { EventChannel } from '@talon/module-sdk';
import type { ManifestSigner } from '@talon/manifest-signing';
import type { InstallOptions, InstallResult, SkillOrigin, SourceRefusal, SourceRequest, StagedSource, skillEvents } from '@talon/skills';
import { ManifestError } from './manifest.ts';
import { checkedCopy, TreeError } from './tree.ts';
import { inspectFolder, SkillRefused, type SkillRegistry } from './store.ts';
import type { SkillHistory } from './history.ts';
import type { SkillsConfig } from '../config.ts';
import type { PromptScanner } from '@talon/prompt-guard';

export interface InstallDeps {
  registry: SkillRegistry;
  history: SkillHistory;
  config: () => SkillsConfig;
  scanner: () => PromptScanner;
  signer: () => ManifestSigner | undefined;
  resolve: (request: SourceRequest) => Promise<StagedSource | SourceRefusal | undefined>;
  stagingRoot: () => string;
  userDir: () => string;
  home: string;
  events: EventChannel<typeof skillEvents>;
  /** Tells the other processes of the home that a skill folder changed (they read it again). */
  folderChanged: (dir: string) => Promise<void>;
}

export class Installer {
  constructor(private readonly deps: InstallDeps) {}

  async install(source: string, options: InstallOptions = {}): Promise<InstallResult> {
    const trimmed = source.trim();
    if (!trimmed) throw badRequest('source must be a path, a git URL or a registry name');
    const staging = this.stagingFolder();
    try {
      const staged = path.isAbsolute(trimmed) ? this.localSource(trimmed) : await this.deps.resolve({ source: trimmed, staging });
      if (!staged) throw notFound(`no skill found for '${trimmed}' (not a folder, a git URL or a name in a configured registry)`);
      if ('refused' in staged) throw new HttpError(staged.refused.status, staged.refused.error);
      return await this.installStaged(staged, options);
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }

  async installStaged(staged: StagedSource, options: InstallOptions = {}): Promise<InstallResult> {
    const work = this.stagingFolder();
    const copy = path.join(work, 'skill');
    try {
      const config = this.deps.config();
      try {
        checkedCopy(staged.dir, copy, { maxFiles: config.max_skill_files, maxBytes: config.max_skill_bytes });
      } catch (err) {
        if (err instanceof TreeError) throw badRequest(`cannot install: ${err.message}`);
        throw err;
      }
      const { manifest, findings } = this.inspect(copy);
      if (options.verify) this.verifySignature(copy, manifest.name);
      if (this.deps.registry.get(manifest.name)) throw conflict(`a skill named '${manifest.name}' is already installed`);
      const target = path.join(this.deps.userDir(), manifest.name);
      if (existsSync(target)) throw conflict(`the skills folder already has a folder '${manifest.name}'`);
      await this.deps.history.setOrigin(manifest.name, staged.origin);
      promote(copy, target);
      const loaded = await this.deps.registry.loadFolder(target, false, `Installed from ${describe(staged.origin)}`);
      await this.deps.folderChanged(target);
      if (!loaded.ok) throw badRequest(`installed but not loaded: ${loaded.blocked.reason}`);
      this.deps.events.publish('skill.installed', { name: manifest.name, version: manifest.version, origin: staged.origin.type });
      return {
        skill: manifest.name,
        version: manifest.version,
        converted_from: manifest.conversion.from,
        warnings: manifest.conversion.warnings,
        tool_translations: manifest.conversion.translations,
        findings,
      };
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }

  /** An absolute folder (or its SKILL.md) inside the allowed roots. */
  private localSource(source: string): StagedSource {
    let real: string;
    try {
      real = realpathSync(source);
    } catch {
      throw notFound(`no skill folder at '${source}'`);
    }
    if (statSync(real).isFile() && ['SKILL.md', 'skill.toml'].includes(path.basename(real))) real = path.dirname(real);
    if (!statSync(real).isDirectory()) throw badRequest(`'${source}' is not a skill folder`);
    const roots = this.deps.config().install_roots.length ? this.deps.config().install_roots : [os.homedir(), this.deps.home];
    const allowed = roots.some((root) => existsSync(root) && isInside(realpathSync(root), real));
    if (!allowed) throw forbidden(`'${source}' is outside the folders skills may be installed from ([skills] install_roots)`);
    return { dir: real, origin: { type: 'local', url: real } };
  }

  private inspect(dir: string) {
    try {
      return inspectFolder(dir, this.deps);
    } catch (err) {
      if (err instanceof SkillRefused && err.findings.some((f) => f.severity === 'critical')) {
        this.deps.events.publish('skill.blocked', { name: path.basename(dir), stage: 'install', reason: err.message });
        throw new HttpError(403, `skill refused by the security scan: ${err.message.replace(/^the security scan refused it: /, '')}`, {
          extra: { findings: err.findings },
        });
      }
      if (err instanceof SkillRefused || err instanceof ManifestError) throw badRequest(`invalid skill: ${err.message}`);
      throw err;
    }
  }

  private verifySignature(dir: string, name: string): void {
    const signer = this.deps.signer();
    if (!signer) throw forbidden('verify was asked but signature checking is unavailable (the manifest-signing module is not running)');
    const file = path.join(dir, 'SIGNATURE.json');
    const refuse = (reason: string) => {
      this.deps.events.publish('skill.blocked', { name, stage: 'verify', reason });
      return forbidden(`signature check failed for skill '${name}': ${reason}`);
    };
    if (!existsSync(file)) throw refuse('the skill is not signed (no SIGNATURE.json)');
    const outcome = signer.verify(readFileSync(file, 'utf8'), { kind: 'skill', contentHash: signer.hashTree(dir) });
    if (!outcome.ok) throw refuse(outcome.reason);
  }

  private stagingFolder(): string {
    mkdirSync(this.deps.stagingRoot(), { recursive: true });
    return mkdtempSync(path.join(this.deps.stagingRoot(), 'stage-'));
  }
}

function describe(origin: SkillOrigin): string {
  return origin.slug ? `${origin.type} '${origin.slug}'` : origin.url ? `${origin.type} ${origin.url}` : origin.type;
}

/** Rename when the staging area and the skills folder share a file system, else copy and delete. */
function promote(from: string, to: string): void {
  mkdirSync(path.dirname(to), { recursive: true });
  try {
    renameSync(from, to);
  } catch {
    cpSync(from, to, { recursive: true });
  }
}
