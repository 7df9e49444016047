/** Test setup for the skills module: a kernel with agents, tools, prompt-guard and skills; skill folders written on disk. */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startAgentTestKernel, type AgentTestKernel, type FakeProvider, type TestKernel } from '@talon/testing';

export interface Env {
  k: AgentTestKernel;
  fake: FakeProvider;
}

export async function startSkills(options: { config?: string; modules?: string[] } = {}): Promise<Env> {
  const only = ['skills', 'agents', 'tools', 'prompt-guard', 'error-envelope', ...(options.modules ?? [])];
  const k = await startAgentTestKernel({ only, config: options.config });
  return { k, fake: k.fake };
}

export async function stopSkills(env: Env | undefined): Promise<void> {
  await env?.k.stop();
}

/** Writes a skill folder (files by relative path) under root and returns its path. */
export function writeSkill(root: string, name: string, files: Record<string, string>): string {
  const dir = path.join(root, name);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), text);
  }
  return dir;
}

export function skillMd(name: string, body: string, extra = ''): string {
  return `---\nname: ${name}\ndescription: ${name} helps with tests\nversion: 0.2.0\nauthor: tester\ntags: [testing, qa]\n${extra}---\n${body}\n`;
}

/** A folder under the kernel's home (inside the default install roots). */
export function sourceRoot(k: TestKernel): string {
  return mkdtempSync(path.join(k.home, 'src-'));
}

export async function json<T>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

export const agentToml = (name: string, skills: string[], tools: string[] = []) =>
  `name = "${name}"\nskills = ${JSON.stringify(skills)}\n[model]\nprovider = "default"\nmodel = "default"\nsystem_prompt = "You are ${name}."\n[capabilities]\ntools = ${JSON.stringify(tools)}\n`;
