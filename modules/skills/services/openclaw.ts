/**
 * OpenClaw / ClawHub SKILL.md frontmatter → this service's terms: `metadata.openclaw.commands` become the skill's
 * (prompt-only) tools, tool names of other agent runtimes are translated to ours, and missing requirements
 * (`requires.bins`, `requires.env`) become warnings. Nothing is executed.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { SkillToolSpec } from '@talon/skills';

export interface Conversion {
  /** 'SKILL.md' when OpenClaw frontmatter was converted, 'package.json' for a Node package, else null. */
  from: string | null;
  tools: SkillToolSpec[];
  warnings: string[];
  translations: Array<{ from: string; to: string }>;
}

/** Tool names used by other agent runtimes → the built-in tool here. */
const TOOL_NAMES: Record<string, string> = {
  read: 'file_read',
  write: 'file_write',
  edit: 'file_write',
  multiedit: 'file_write',
  glob: 'file_list',
  grep: 'file_list',
  ls: 'file_list',
  bash: 'shell_exec',
  exec: 'shell_exec',
  shell: 'shell_exec',
  webfetch: 'web_fetch',
  web_fetch: 'web_fetch',
  websearch: 'web_search',
  web_search: 'web_search',
  sessions_send: 'agent_send',
  sessions_spawn: 'agent_spawn',
  memory_search: 'memory_recall',
  apply_patch: 'apply_patch',
};

type Table = Record<string, unknown>;

const asTable = (v: unknown): Table => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Table) : {});
const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : typeof v === 'string' ? v.split(/[,\s]+/).filter(Boolean) : []);

export function translateTool(name: string): string {
  const key = name.toLowerCase().replace(/\(.*\)$/, '');
  return TOOL_NAMES[key] ?? key.replace(/-/g, '_');
}

export function convertOpenClaw(meta: Table, env: NodeJS.ProcessEnv = process.env): Conversion {
  const metadata = asTable(meta.metadata);
  const claw = asTable(metadata.openclaw ?? metadata.clawdbot ?? metadata.clawhub);
  const allowed = asList(meta['allowed-tools'] ?? meta.allowed_tools).map(String);
  if (!Object.keys(claw).length && !allowed.length) return { from: null, tools: [], warnings: [], translations: [] };
  const translations = new Map<string, string>();
  const warnings: string[] = [];
  for (const name of allowed) {
    const to = translateTool(name);
    if (to !== name) translations.set(name, to);
  }
  const tools: SkillToolSpec[] = [];
  for (const command of asList(claw.commands).map(asTable)) {
    if (typeof command.name !== 'string') continue;
    const to = translateTool(command.name);
    if (to !== command.name) translations.set(command.name, to);
    tools.push({ name: to, description: String(command.description ?? ''), input_schema: { type: 'object', properties: { input: { type: 'string' } } } });
  }
  const requires = asTable(claw.requires);
  for (const bin of asList(requires.bins).map(String)) {
    if (!onPath(bin, env.PATH ?? '')) warnings.push(`requires the program '${bin}', which is not on the PATH`);
  }
  for (const name of asList(requires.env).map(String)) {
    if (!env[name]) warnings.push(`requires the environment variable '${name}', which is not set`);
  }
  return { from: 'SKILL.md', tools, warnings, translations: [...translations].map(([from, to]) => ({ from, to })) };
}

function onPath(bin: string, pathList: string): boolean {
  if (bin.includes('/')) return false;
  return pathList.split(path.delimiter).some((dir) => dir && existsSync(path.join(dir, bin)));
}
