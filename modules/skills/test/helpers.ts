/** Test setup for the skills module: a kernel with agents, tools, prompt-guard and skills; skill folders written on disk. */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { FakeProvider, startTestKernel, type TestKernel } from '@talon/testing';

export interface Env {
  k: TestKernel;
  fake: FakeProvider;
}

export async function startSkills(options: { config?: string; modules?: string[] } = {}): Promise<Env> {
  process.env.SKILLS_FAKE_KEY = 'sk-test-fake-key';
  const fake = new FakeProvider();
  await fake.start();
  const config = [
    '[default_model]',
    'provider = "openai"',
    'model = "fake-model"',
    `base_url = "${fake.url}/v1"`,
    'api_key_env = "SKILLS_FAKE_KEY"',
    '[llm]',
    'max_retries = 0',
    options.config ?? '',
  ].join('\n');
  const k = await startTestKernel({ only: ['skills', 'agents', 'tools', 'prompt-guard', 'llm-openai', 'error-envelope', ...(options.modules ?? [])], config });
  return { k, fake };
}

export async function stopSkills(env: Env | undefined): Promise<void> {
  await env?.k.stop();
  await env?.fake.stop();
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
