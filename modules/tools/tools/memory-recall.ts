import type { ToolFactory } from '../services/deps.ts';
import { fail, failFrom, ok } from '../services/result.ts';
import { accessProblem, isOutput, keyProblem, memoryOf } from './memory-common.ts';

const MAX_CHARS = 64 * 1024;

export const memoryRecallTool: ToolFactory = (deps) => ({
  name: 'memory_recall',
  requiresAgent: true,
  description: "Recall a value from the agent's memory by key.",
  source: 'builtin',
  inputSchema: {
    type: 'object',
    properties: { key: { type: 'string', minLength: 1, maxLength: 256 } },
    required: ['key'],
  },
  async execute(input, ctx) {
    const memory = memoryOf(deps);
    if (isOutput(memory)) return memory;
    const key = input.key;
    const problem = keyProblem(key) ?? accessProblem(ctx, 'memory_read', key as string);
    if (problem) return fail(problem);
    try {
      const entry = await memory.get(ctx.agent.id, key as string);
      if (!entry) return ok(`No value found for key '${key as string}'.`);
      const text = JSON.stringify(entry.value, null, 2) ?? 'null';
      return ok(text.length > MAX_CHARS ? `${text.slice(0, MAX_CHARS)}... [truncated]` : text);
    } catch (err) {
      return failFrom(err, 'Failed to recall the value');
    }
  },
});
