/** The rules a skill must meet before it is loaded or installed; each problem names the field. */
import { existsSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { isInside } from '@talon/module-sdk';
import type { SkillManifest } from './manifest.ts';

export const NAME_RE = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const TOOL_RE = /^[a-zA-Z][a-zA-Z0-9_]{0,63}$/;
export const MAX_DESCRIPTION = 1024;
export const MAX_PROMPT = 160_000;

export function nameProblem(name: string): string | undefined {
  if (!NAME_RE.test(name)) return `skill name '${name}' is invalid: use 1-64 characters a-z, 0-9, '-' and '_', starting with a letter or digit`;
  return undefined;
}

export function manifestProblems(m: SkillManifest, dir: string): string[] {
  const problems: string[] = [];
  const nameIssue = nameProblem(m.name);
  if (nameIssue) problems.push(nameIssue);
  if (m.description.length > MAX_DESCRIPTION) problems.push(`description is longer than ${MAX_DESCRIPTION} characters`);
  if (m.promptContext.length > MAX_PROMPT) problems.push(`the prompt context is longer than ${MAX_PROMPT} characters`);
  if (m.version.length > 64) problems.push('version is longer than 64 characters');
  const seen = new Set<string>();
  for (const tool of m.tools) {
    if (!TOOL_RE.test(tool.name)) problems.push(`tool name '${tool.name}' is invalid: 1-64 letters, digits and '_', starting with a letter`);
    if (seen.has(tool.name)) problems.push(`tool '${tool.name}' is declared twice`);
    seen.add(tool.name);
    if ((tool.input_schema as { type?: unknown }).type !== undefined && (tool.input_schema as { type?: unknown }).type !== 'object') {
      problems.push(`tool '${tool.name}': input_schema must describe an object`);
    }
  }
  if (m.runtime !== 'PromptOnly') {
    if (!m.entry) problems.push(`runtime ${m.runtime} needs [runtime] entry (the program to run)`);
    else if (!entryInside(dir, m.entry)) problems.push(`entry '${m.entry}' does not exist inside the skill folder`);
    if (!m.tools.length) problems.push(`runtime ${m.runtime} declares no tools ([[tools.provided]])`);
  }
  return problems;
}

/** The entry exists and, after resolving links, stays in the folder. */
export function entryInside(dir: string, entry: string): string | undefined {
  if (path.isAbsolute(entry) || entry.split(/[\\/]/).includes('..')) return undefined;
  const file = path.join(dir, entry);
  if (!existsSync(file)) return undefined;
  const real = realpathSync(file);
  return isInside(realpathSync(dir), real) ? real : undefined;
}
