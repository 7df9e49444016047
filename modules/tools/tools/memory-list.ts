import type { ToolFactory } from '../services/deps.ts';
import { memoryKeyAllowed } from '../services/globs.ts';
import { fail, failFrom, ok, optionalInt } from '../services/result.ts';
import { accessProblem, isOutput, memoryOf } from './memory-common.ts';

const DEFAULT_LIMIT = 100;

export const memoryListTool: ToolFactory = (deps) => ({
  name: 'memory_list',
  requiresAgent: true,
  description: "List keys in the agent's memory with pagination.",
  aliases: ['memory_all'],
  source: 'builtin',
  inputSchema: {
    type: 'object',
    properties: {
      limit: { type: 'integer', minimum: 1, maximum: 1000, description: `default ${DEFAULT_LIMIT}` },
      offset: { type: 'integer', minimum: 0 },
    },
  },
  async execute(input, ctx) {
    const memory = memoryOf(deps);
    if (isOutput(memory)) return memory;
    const problem = accessProblem(ctx, 'memory_read');
    if (problem) return fail(problem);
    try {
      const limit = optionalInt(input, 'limit') || DEFAULT_LIMIT;
      const offset = optionalInt(input, 'offset') ?? 0;
      const patterns = ctx.agent.manifest.capabilities.memory_read;
      const entries = (await memory.list(ctx.agent.id, { limit, offset })).filter((e) => memoryKeyAllowed(patterns, e.key));
      if (!entries.length) return ok(offset ? `No keys at offset ${offset}.` : 'No keys stored in memory.');
      const keys = entries.map((e) => `- ${e.key}`).join('\n');
      return ok(`${entries.length} key(s) (offset ${offset}):\n${keys}`);
    } catch (err) {
      return failFrom(err, 'Failed to list memory');
    }
  },
});
