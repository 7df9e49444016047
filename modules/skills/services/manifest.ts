/**
 * A skill folder → SkillManifest. Three shapes are read: skill.toml (the native format, with SKILL.md or
 * prompt_context.md holding the prompt when the TOML has none), SKILL.md alone (YAML frontmatter + body; OpenClaw
 * frontmatter is converted), and an OpenClaw Node package (package.json). Problems are ManifestErrors naming the file.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { parse as parseYaml } from 'yaml';
import type { JsonSchema } from '@talon/module-sdk';
import type { SkillRuntime, SkillToolSpec } from '@talon/skills';
import { convertOpenClaw, type Conversion } from './openclaw.ts';

export interface SkillManifest {
  name: string;
  version: string;
  description: string;
  author: string;
  license: string;
  tags: string[];
  category: string;
  runtime: SkillRuntime;
  /** The program a script or WASM runtime runs, relative to the skill folder. */
  entry?: string;
  tools: SkillToolSpec[];
  config: Record<string, unknown>;
  envPassthrough: string[];
  capabilities: string[];
  timeoutSecs: number;
  promptContext: string;
  conversion: Conversion;
}

export class ManifestError extends Error {}

type Table = Record<string, unknown>;

const RUNTIMES: Record<string, SkillRuntime> = {
  promptonly: 'PromptOnly',
  prompt_only: 'PromptOnly',
  python: 'Python',
  node: 'Node',
  shell: 'Shell',
  bash: 'Shell',
  wasm: 'Wasm',
};
const PLATFORM_TAGS = /^(macos|linux|windows)(-only)?$/;
export const MAX_MANIFEST_BYTES = 1024 * 1024;

export function readManifest(dir: string): SkillManifest {
  const toml = path.join(dir, 'skill.toml');
  const md = path.join(dir, 'SKILL.md');
  if (existsSync(toml)) return fromToml(dir, readText(toml), existsSync(md) ? splitFrontmatter(readText(md), 'SKILL.md') : undefined);
  if (existsSync(md)) return fromSkillMd(dir, splitFrontmatter(readText(md), 'SKILL.md'));
  if (existsSync(path.join(dir, 'package.json'))) return fromPackage(dir);
  throw new ManifestError('no SKILL.md, skill.toml or package.json in the skill folder');
}

export function readText(file: string): string {
  const buf = readFileSync(file);
  if (buf.length > MAX_MANIFEST_BYTES) throw new ManifestError(`${path.basename(file)} is larger than 1 MiB`);
  return buf.toString('utf8').replace(/\r\n/g, '\n');
}

/** SKILL.md → frontmatter table + trimmed body. */
export function splitFrontmatter(text: string, file: string): { meta: Table; body: string } {
  const trimmed = text.replace(/^\uFEFF/, '').trimStart();
  if (!trimmed.startsWith('---')) return { meta: {}, body: trimmed.trim() };
  const end = trimmed.indexOf('\n---', 3);
  if (end === -1) throw new ManifestError(`${file}: the frontmatter is not closed with '---'`);
  let meta: unknown;
  try {
    meta = parseYaml(trimmed.slice(3, end), { maxAliasCount: 50 });
  } catch (err) {
    throw new ManifestError(`${file}: invalid YAML frontmatter: ${(err as Error).message.split('\n')[0]}`);
  }
  if (meta !== null && meta !== undefined && (typeof meta !== 'object' || Array.isArray(meta)))
    throw new ManifestError(`${file}: the frontmatter must be a mapping`);
  const body = trimmed.slice(end + 4).replace(/^[^\n]*\n/, '');
  return { meta: (meta ?? {}) as Table, body: body.trim() };
}

function fromSkillMd(dir: string, md: { meta: Table; body: string }): SkillManifest {
  const conversion = convertOpenClaw(md.meta);
  const tags = strings(md.meta.tags, 'tags');
  return {
    ...common(dir, md.meta, tags),
    runtime: 'PromptOnly',
    tools: conversion.tools,
    config: {},
    envPassthrough: [],
    capabilities: [],
    timeoutSecs: 30,
    promptContext: md.body,
    conversion,
  };
}

function fromToml(dir: string, text: string, md: { meta: Table; body: string } | undefined): SkillManifest {
  let doc: Table;
  try {
    doc = parseToml(text) as Table;
  } catch (err) {
    throw new ManifestError(`skill.toml: ${(err as Error).message.split('\n')[0]}`);
  }
  const skill = table(doc.skill, 'skill');
  const runtime = table(doc.runtime, 'runtime');
  const meta = { ...(md?.meta ?? {}), ...skill };
  const type = String(runtime.type ?? 'promptonly').toLowerCase();
  if (!RUNTIMES[type]) throw new ManifestError(`skill.toml: unknown runtime type '${type}' (promptonly, python, node, shell, wasm)`);
  const promptFile = path.join(dir, 'prompt_context.md');
  const prompt = typeof doc.prompt_context === 'string' ? doc.prompt_context : existsSync(promptFile) ? readText(promptFile) : (md?.body ?? '');
  const requirements = table(doc.requirements, 'requirements');
  return {
    ...common(dir, meta, strings(meta.tags, 'skill.tags')),
    runtime: RUNTIMES[type],
    ...(typeof runtime.entry === 'string' && { entry: runtime.entry }),
    tools: tomlTools(doc.tools),
    config: table(doc.config, 'config'),
    envPassthrough: strings(doc.env_passthrough, 'env_passthrough'),
    capabilities: strings(requirements.capabilities ?? doc.capabilities, 'capabilities'),
    timeoutSecs: clampTimeout(runtime.timeout_secs ?? requirements.timeout_secs),
    promptContext: prompt.trim(),
    conversion: { from: null, tools: [], warnings: [], translations: [] },
  };
}

/** An OpenClaw Node package: package.json (+ index.js); its tools come from package.json#openclaw.tools. */
function fromPackage(dir: string): SkillManifest {
  let pkg: Table;
  try {
    pkg = JSON.parse(readText(path.join(dir, 'package.json'))) as Table;
  } catch (err) {
    throw new ManifestError(`package.json: ${(err as Error).message}`);
  }
  const entry = ['index.js', 'dist/index.js'].find((f) => existsSync(path.join(dir, f)));
  if (!entry) throw new ManifestError('package.json: no index.js or dist/index.js to run (a TypeScript-only package cannot run)');
  const name = String(pkg.name ?? path.basename(dir)).replace(/^@[^/]+\//, '');
  const openclaw = table(pkg.openclaw, 'package.json openclaw');
  const declared = Array.isArray(openclaw.tools) ? (openclaw.tools as Table[]) : [];
  const tools = declared.length
    ? declared.map((t, i) => tool(t, `openclaw.tools[${i}]`))
    : [{ name: toolName(name), description: String(pkg.description ?? name), input_schema: INPUT_SCHEMA }];
  return {
    ...common(dir, { ...pkg, name }, strings(pkg.keywords, 'keywords')),
    runtime: 'Node',
    entry,
    tools,
    config: {},
    envPassthrough: [],
    capabilities: [],
    timeoutSecs: 30,
    promptContext: '',
    conversion: { from: 'package.json', tools: [], warnings: [], translations: [] },
  };
}

const INPUT_SCHEMA: JsonSchema = { type: 'object', properties: { input: { type: 'string' } } };

function common(dir: string, meta: Table, tags: string[]) {
  return {
    name: String(meta.name ?? path.basename(dir)).trim(),
    version: String(meta.version ?? '0.1.0'),
    description: String(meta.description ?? '').trim(),
    author: String(meta.author ?? ''),
    license: String(meta.license ?? ''),
    tags,
    category: typeof meta.category === 'string' && meta.category ? meta.category : (tags.find((t) => !PLATFORM_TAGS.test(t)) ?? 'general'),
  };
}

function tomlTools(value: unknown): SkillToolSpec[] {
  if (value === undefined) return [];
  const provided = Array.isArray(value) ? value : table(value, 'tools').provided;
  if (provided === undefined) return [];
  if (!Array.isArray(provided)) throw new ManifestError('skill.toml: tools.provided must be an array of tables');
  return provided.map((t, i) => tool(t as Table, `tools.provided[${i}]`));
}

function tool(t: Table, where: string): SkillToolSpec {
  if (typeof t !== 'object' || t === null || typeof t.name !== 'string') throw new ManifestError(`${where}: a tool needs a name`);
  const schema = t.input_schema ?? t.inputSchema ?? t.parameters ?? { type: 'object', properties: {} };
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) throw new ManifestError(`${where}: input_schema must be a table`);
  return { name: t.name, description: String(t.description ?? ''), input_schema: schema as JsonSchema };
}

export function toolName(name: string): string {
  return (
    name
      .toLowerCase()
      .replace(/[^a-z0-9_]+/g, '_')
      .replace(/^_+|_+$/g, '') || 'run'
  );
}

function table(value: unknown, where: string): Table {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ManifestError(`${where} must be a table`);
  return value as Table;
}

function strings(value: unknown, where: string): string[] {
  if (value === undefined || value === null) return [];
  if (typeof value === 'string')
    return value
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' && typeof v !== 'number')) throw new ManifestError(`${where} must be a list of strings`);
  return value.map(String);
}

/** Absent or 0 → 30 s; at most 600 s. */
function clampTimeout(value: unknown): number {
  const n = typeof value === 'number' && value > 0 ? value : 30;
  return Math.min(n, 600);
}
