/**
 * Installing a hand: from HAND.toml text (plus SKILL.md texts), from a registry slug (the hub's registry, hands/<id>/),
 * or from a local folder inside the install roots. The definition is parsed and its prompt-bearing texts (system
 * prompts, SKILL files) scanned before anything is written; the folder lands in the hands folder in one rename.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HttpError, badRequest, conflict, forbidden, isInside, notFound } from '@talon/module-sdk';
import type { HandDefinition } from '@talon/hands';
import type { RegistryService } from '@talon/hub';
import type { Finding, PromptScanner } from '@talon/prompt-guard';
import { parseHand } from './definition.ts';
import { readSkillFiles, type HandCatalog } from './catalog.ts';
import { DefinitionError } from './toml-read.ts';

export interface InstallSource {
  toml_content?: string;
  skill_content?: string;
  skill_files?: Record<string, string>;
  slug?: string;
  registry?: 'hub' | 'hub-cn';
  path?: string;
}

export interface InstallDeps {
  catalog: HandCatalog;
  customDir: () => string;
  installRoots: () => string[];
  home: string;
  scanner: () => PromptScanner;
  registry: () => RegistryService | undefined;
  stagingDir: () => string;
}

const SKILL_KEY = /^[A-Za-z0-9_-]{0,64}$/;

export class HandInstaller {
  constructor(private readonly deps: InstallDeps) {}

  async install(source: InstallSource): Promise<{ hand: HandDefinition; findings: Finding[] }> {
    const given = [source.toml_content !== undefined, source.slug !== undefined, source.path !== undefined].filter(Boolean).length;
    if (given !== 1) throw badRequest('give exactly one of toml_content (HAND.toml text), slug (a registry hand) or path (a local folder)');
    mkdirSync(this.deps.stagingDir(), { recursive: true });
    const staging = mkdtempSync(path.join(this.deps.stagingDir(), 'hand-'));
    try {
      const { text, skills } = await this.read(source, staging);
      let def: HandDefinition;
      try {
        def = parseHand(text, skills, 'custom', '');
      } catch (err) {
        if (err instanceof DefinitionError) throw badRequest(`invalid HAND.toml: ${err.message}`);
        throw err;
      }
      const existing = this.deps.catalog.get(def.id);
      if (existing) throw conflict(`hand '${def.id}' is already installed (${existing.source}); uninstall it first`);
      const findings = this.scan(def);
      const target = path.join(this.deps.customDir(), def.id);
      if (existsSync(target)) throw conflict(`the hands folder already has a folder '${def.id}' (it does not load: see GET /api/hands)`);
      const out = path.join(staging, 'out');
      mkdirSync(out);
      writeFileSync(path.join(out, 'HAND.toml'), text);
      for (const [role, body] of Object.entries(skills)) writeFileSync(path.join(out, role ? `SKILL-${role}.md` : 'SKILL.md'), body);
      mkdirSync(this.deps.customDir(), { recursive: true });
      renameSync(out, target);
      this.deps.catalog.reload();
      const hand = this.deps.catalog.get(def.id);
      if (!hand) throw badRequest(`hand '${def.id}' was written but does not load: ${this.deps.catalog.failures().find((f) => f.folder === target)?.reason}`);
      return { hand, findings };
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }

  private async read(source: InstallSource, staging: string): Promise<{ text: string; skills: Record<string, string> }> {
    if (source.toml_content !== undefined) {
      const skills: Record<string, string> = { ...(source.skill_files ?? {}) };
      if (source.skill_content !== undefined) skills[''] = source.skill_content;
      for (const key of Object.keys(skills)) if (!SKILL_KEY.test(key)) throw badRequest(`skill_files key '${key}' must be a role name`);
      return { text: source.toml_content, skills };
    }
    if (source.slug !== undefined) {
      const registry = this.deps.registry();
      if (!registry) throw new HttpError(503, 'installing from a registry needs the hub module, which is not running');
      const { dir } = await registry.stage('hands', source.slug, path.join(staging, 'src'), source.registry);
      return readFolder(dir);
    }
    return readFolder(this.localFolder(source.path!));
  }

  private localFolder(given: string): string {
    if (!path.isAbsolute(given)) throw badRequest('path must be an absolute path to a hand folder (or its HAND.toml)');
    let real: string;
    try {
      real = realpathSync(given);
    } catch {
      throw notFound(`no hand folder at '${given}'`);
    }
    if (statSync(real).isFile()) real = path.dirname(real);
    const roots = this.deps.installRoots().length ? this.deps.installRoots() : [os.homedir(), this.deps.home];
    if (!roots.some((root) => existsSync(root) && isInside(realpathSync(root), real)))
      throw forbidden(`'${given}' is outside the folders hands may be installed from ([hands] install_roots)`);
    return real;
  }

  /** System prompts and SKILL texts go into agents' prompts: a critical finding refuses the hand (403). */
  private scan(def: HandDefinition): Finding[] {
    const files = [
      ...def.agents.map((a) => ({ path: `HAND.toml [agents.${a.role}] system_prompt`, text: a.system_prompt })),
      ...Object.entries(def.skill_files).map(([role, text]) => ({ path: role ? `SKILL-${role}.md` : 'SKILL.md', text })),
    ];
    const scanner = this.deps.scanner();
    const report = scanner.scanFiles(files);
    if (report.blocked)
      throw new HttpError(403, `hand '${def.id}' refused by the security scan: ${scanner.summary(report)}`, { extra: { findings: report.findings } });
    return report.findings;
  }
}

function readFolder(dir: string): { text: string; skills: Record<string, string> } {
  const file = path.join(dir, 'HAND.toml');
  if (!existsSync(file)) throw badRequest(`'${path.basename(dir)}' has no HAND.toml`);
  return { text: readFileSync(file, 'utf8'), skills: readSkillFiles(dir) };
}
