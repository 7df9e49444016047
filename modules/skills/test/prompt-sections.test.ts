import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AgentRecord } from '@talon/agents';
import { PromptSections } from '../services/prompt.ts';
import type { LoadedSkill, SkillRegistry } from '../services/store.ts';
import type { SkillsConfig } from '../config.ts';

/** The part of the registry a prompt section reads: one skill whose text the test changes, and the generation. */
function registryWith(text: { value: string }) {
  const skill = () => ({ name: 'style', manifest: { version: '1.0.0', promptContext: text.value } }) as unknown as LoadedSkill;
  return { generation: 0, get: () => skill(), all: () => [skill()] } as unknown as SkillRegistry & { generation: number };
}

test('a terminated agent leaves no frozen section behind (one per agent ever seen in Stable mode otherwise)', () => {
  const text = { value: 'Write in British English.' };
  const registry = registryWith(text);
  const sections = new PromptSections(registry, () => ({ max_prompt_chars: 1000, max_prompt_total_chars: 10_000 }) as SkillsConfig);
  const agent = { id: 'a1', mode: 'Stable', skills: ['style'] } as AgentRecord;
  assert.match(sections.section(agent), /British/);
  text.value = 'Write in American English.';
  registry.generation++;
  assert.match(sections.section(agent), /British/, 'Stable mode keeps the section it froze');
  sections.forget(agent.id);
  assert.match(sections.section(agent), /American/, 'forgotten: nothing of the old agent is kept');
});
