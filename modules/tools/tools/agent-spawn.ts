import type { ToolFactory } from '../services/deps.ts';
import { inheritanceProblem } from '../services/inheritance.ts';
import { childManifestToml } from '../services/manifest-toml.ts';
import { fail, failFrom, ok, optionalStringList, requiredString } from '../services/result.ts';

const list = { type: 'array', items: { type: 'string' } } as const;

export const agentSpawnTool: ToolFactory = (deps) => ({
  name: 'agent_spawn',
  requiresAgent: true,
  description: "Spawn a new agent from settings. Its capabilities (tools, network, shell) must stay within this agent's own.",
  source: 'builtin',
  inputSchema: {
    type: 'object',
    properties: {
      name: { type: 'string', description: 'name of the new agent' },
      system_prompt: { type: 'string' },
      tools: { ...list, description: 'tool names to grant (default none)' },
      network: { ...list, description: 'hosts the new agent may fetch' },
      shell: { ...list, description: 'command globs the new agent may run' },
    },
    required: ['name', 'system_prompt'],
  },
  async execute(input, ctx) {
    const parent = ctx.agent;
    if (parent.manifest.capabilities.agent_spawn !== true) {
      return fail('agent_spawn is not permitted: the agent manifest does not set capabilities.agent_spawn = true');
    }
    let toml: string;
    try {
      const child = {
        tools: optionalStringList(input, 'tools'),
        network: optionalStringList(input, 'network'),
        shell: optionalStringList(input, 'shell'),
      };
      const problem = inheritanceProblem(
        { tools: parent.tools, network: parent.manifest.capabilities.network ?? [], shell: parent.manifest.capabilities.shell ?? [] },
        child,
      );
      if (problem) return fail(problem);
      toml = childManifestToml({
        name: requiredString(input, 'name', 'agent_spawn').trim(),
        description: `Spawned by agent '${parent.name}'`,
        provider: parent.model.provider,
        model: parent.model.model,
        systemPrompt: requiredString(input, 'system_prompt', 'agent_spawn'),
        ...child,
        // Memory access is inherited as is, so it never exceeds the parent's.
        memoryRead: parent.manifest.capabilities.memory_read ?? [],
        memoryWrite: parent.manifest.capabilities.memory_write ?? [],
      });
    } catch (err) {
      return failFrom(err);
    }
    try {
      const record = await deps.registry().spawn({ manifestToml: toml, parentId: parent.id });
      return ok(`Agent spawned successfully.\nID: ${record.id}\nName: ${record.name}`);
    } catch (err) {
      return failFrom(err, 'Failed to spawn the agent');
    }
  },
});
