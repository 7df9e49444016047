/**
 * POST /api/skills/create: a prompt-only skill written from the request (validated and scanned before anything is
 * written), loaded at once. A critical scan finding is a 400 listing the findings.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { HttpError, badRequest, conflict, type EventChannel } from '@talon/module-sdk';
import type { skillEvents } from '@talon/skills';
import type { PromptScanner } from '@talon/prompt-guard';
import { MAX_DESCRIPTION, MAX_PROMPT, nameProblem } from './validate.ts';
import type { SkillRegistry } from './store.ts';

export interface CreateRequest {
  name: string;
  description: string;
  prompt_context?: string;
  tags?: string[];
}

export const CREATED_VERSION = '0.1.0';

export async function createSkill(
  request: CreateRequest,
  deps: {
    registry: SkillRegistry;
    scanner: PromptScanner;
    userDir: string;
    events: EventChannel<typeof skillEvents>;
    folderChanged: (dir: string) => Promise<void>;
  },
): Promise<{ name: string; version: string }> {
  const name = request.name.trim();
  const problem = nameProblem(name);
  if (problem) throw badRequest(problem);
  const description = request.description.trim();
  if (!description) throw badRequest('description must not be empty');
  if (description.length > MAX_DESCRIPTION) throw badRequest(`description is longer than ${MAX_DESCRIPTION} characters`);
  const prompt = (request.prompt_context ?? '').trim();
  if (prompt.length > MAX_PROMPT) throw badRequest(`prompt_context is longer than ${MAX_PROMPT} characters`);
  const report = deps.scanner.scanFiles([
    { path: 'description', text: description },
    { path: 'prompt_context', text: prompt },
  ]);
  if (report.blocked) {
    deps.events.publish('skill.blocked', { name, stage: 'create', reason: deps.scanner.summary(report) });
    throw new HttpError(400, `skill refused by the security scan: ${deps.scanner.summary(report)}`, { extra: { findings: report.findings } });
  }
  const dir = path.join(deps.userDir, name);
  if (deps.registry.get(name) || existsSync(dir)) throw conflict(`a skill named '${name}' already exists`);
  const meta = { name, description, version: CREATED_VERSION, author: 'dashboard', tags: request.tags ?? [] };
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'SKILL.md'), `---\n${stringify(meta)}---\n${prompt}\n`);
  const loaded = await deps.registry.loadFolder(dir, false, 'Initial creation');
  if (!loaded.ok) {
    rmSync(dir, { recursive: true, force: true });
    throw badRequest(`invalid skill: ${loaded.blocked.reason}`);
  }
  await deps.folderChanged(dir);
  return { name, version: CREATED_VERSION };
}
