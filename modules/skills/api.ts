/**
 * Contract of the skills module: the installed skills and the one install pipeline (stage → parse → validate →
 * scan → verify → promote → hot-load) that every source goes through. Sources other than a staged folder are
 * resolved by taps of skillsHooks.resolveSource (the hub module resolves paths, git URLs and registry names).
 */
import { AsyncSeriesBailHook, defineEvents, defineHooks, payload, serviceRef, type JsonSchema } from '@talon/module-sdk';
import type { Finding } from '@talon/prompt-guard';

export type SkillRuntime = 'PromptOnly' | 'Python' | 'Node' | 'Shell' | 'Wasm';

/** Where an installed skill came from. */
export interface SkillOrigin {
  /** bundled (ships with the service), local (a folder or created here), git, registry, hub, hub-cn. */
  type: 'bundled' | 'local' | 'git' | 'registry' | 'hub' | 'hub-cn';
  url?: string;
  slug?: string;
  version?: string;
}

export interface SkillToolSpec {
  name: string;
  description: string;
  input_schema: JsonSchema;
}

export interface SkillVersion {
  version: string;
  timestamp: string;
  changelog: string;
  content_hash: string;
}

export interface SkillSummary {
  name: string;
  version: string;
  runtime: SkillRuntime;
  description: string;
  author: string;
  tags: string[];
  category: string;
  tools_count: number;
  enabled: boolean;
  has_prompt_context: boolean;
  source: { type: string; slug?: string; version?: string };
}

export interface SkillDetail {
  name: string;
  version: string;
  description: string;
  author: string;
  license: string;
  tags: string[];
  category: string;
  runtime: SkillRuntime;
  tools: SkillToolSpec[];
  has_prompt_context: boolean;
  prompt_context_length: number;
  /** 'Bundled', 'Local', 'Git', 'Registry', 'Hub', 'HubCn'. */
  source: string;
  origin: SkillOrigin;
  enabled: boolean;
  bundled: boolean;
  path: string;
  linked_files: Record<string, string[]>;
  evolution: { versions: SkillVersion[]; use_count: number; evolution_count: number };
  /** Non-blocking findings of the last scan. */
  findings: Finding[];
}

export interface InstallResult {
  skill: string;
  version: string;
  /** The foreign format it was converted from: 'SKILL.md' (OpenClaw frontmatter), 'package.json', or null. */
  converted_from: string | null;
  warnings: string[];
  tool_translations: Array<{ from: string; to: string }>;
  findings: Finding[];
}

/** A source resolved into a folder the pipeline takes from here (copied, never moved). */
export interface StagedSource {
  dir: string;
  origin: SkillOrigin;
  /** When the source named a digest (a registry index), the SHA-256 the download had to match: verified by the resolver. */
  sha256?: string;
}

export interface SourceRequest {
  /** What the client sent: an absolute path, a git URL, an https archive URL or a registry name. */
  source: string;
  /** An empty folder of the skills module's staging area the resolver may fill (removed afterwards). */
  staging: string;
}

/** A resolver that recognised the source but cannot deliver it answers this (a throwing tap would be skipped). */
export interface SourceRefusal {
  refused: { status: number; error: string };
}

export interface InstallOptions {
  /** Require a valid signature (SIGNATURE.json) by a trusted signer. */
  verify?: boolean;
}

export interface SkillStore {
  list(): SkillSummary[];
  detail(name: string): Promise<SkillDetail | undefined>;
  /** Resolves the source (skillsHooks.resolveSource) and installs it. Rejects with HttpError (400, 403, 404, 409). */
  install(source: string, options?: InstallOptions): Promise<InstallResult>;
  /** Installs an already staged folder (the hub's installs). Rejects like install. */
  installStaged(staged: StagedSource, options?: InstallOptions): Promise<InstallResult>;
  /** Bundled skills are refused (400); unknown ones are 404. */
  uninstall(name: string): Promise<void>;
  /** Reads every skill again (the other processes of the home too); answers how many are loaded here. */
  reload(): Promise<number>;
  /** Parses a skill folder without installing it (a registry's listing); throws with the reason it does not parse. */
  describe(dir: string): SkillSummary & { converted_from: string | null };
}

export const skillStore = serviceRef<SkillStore>('skills.store');

export const skillsHooks = defineHooks('skills.hooks', () => ({
  /** Turns an install source into a staged folder; the first tap that recognises the source answers. */
  resolveSource: new AsyncSeriesBailHook<[SourceRequest], StagedSource | SourceRefusal | undefined>(['request']),
}));

export const skillEvents = defineEvents('skills', {
  'skill.installed': payload<{ name: string; version: string; origin: string }>(),
  'skill.uninstalled': payload<{ name: string }>(),
  /** A skill refused by the scan or the signature check (install, create or load). */
  'skill.blocked': payload<{ name: string; stage: 'create' | 'install' | 'load' | 'verify'; reason: string }>(),
});
