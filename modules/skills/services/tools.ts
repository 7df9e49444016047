/**
 * Skill tools as agent tools: one definition per tool of every loaded executable skill, granted only to agents
 * whose skill list names the skill (or holds '*'), whatever their tool list says. Rebuilt when the registry
 * changes; a name already taken by another tool is left out (and logged).
 */
import type { ToolDefinition } from '@talon/agents';
import type { Logger } from 'pino';
import type { SkillRegistry } from './store.ts';
import type { SkillHistory } from './history.ts';
import { runSkillTool, type RunnerDeps } from './runner.ts';

export class SkillTools {
  private built = { generation: -1, tools: [] as ToolDefinition[] };

  constructor(
    private readonly registry: SkillRegistry,
    private readonly history: SkillHistory,
    private readonly runner: RunnerDeps,
    private readonly log: Logger,
  ) {}

  /** The waterfall step: our tools after the others'. */
  contribute(list: ToolDefinition[]): ToolDefinition[] {
    const taken = new Set(list.map((t) => t.name));
    const mine = this.definitions().filter((t) => {
      if (!taken.has(t.name)) return true;
      this.log.debug({ tool: t.name, source: t.source }, 'skill tool left out: the name is taken');
      return false;
    });
    return [...list, ...mine];
  }

  private definitions(): ToolDefinition[] {
    if (this.built.generation === this.registry.generation) return this.built.tools;
    const tools: ToolDefinition[] = [];
    for (const skill of this.registry.all()) {
      if (skill.manifest.runtime === 'PromptOnly') continue;
      for (const spec of skill.manifest.tools) {
        const name = skill.name;
        tools.push({
          name: spec.name,
          description: `${spec.description} (skill ${name})`.trim(),
          inputSchema: spec.input_schema,
          source: `skill:${name}`,
          requiresAgent: true,
          exclusiveGrant: true,
          grantedTo: (agent) => agent.skills.includes('*') || agent.skills.includes(name),
          execute: async (input, ctx) => {
            // The skill as loaded now (it may have been reloaded since the list was built).
            const current = this.registry.get(name);
            if (!current) return { content: `skill '${name}' is no longer installed`, isError: true };
            const output = await runSkillTool(current, spec.name, input, ctx, this.runner);
            if (!output.isError) this.history.used(name);
            return output;
          },
        });
      }
    }
    this.built = { generation: this.registry.generation, tools };
    return tools;
  }
}
