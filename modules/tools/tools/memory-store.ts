import type { ToolFactory } from '../services/deps.ts';
import { fail, failFrom, ok } from '../services/result.ts';
import { accessProblem, isOutput, keyProblem, memoryOf } from './memory-common.ts';

export const memoryStoreTool: ToolFactory = (deps) => ({
  name: 'memory_store',
  requiresAgent: true,
  description: "Store a value in the agent's memory under a key (letters, digits, '_', '.', '-'). The value may be any JSON.",
  aliases: ['memory_save'],
  source: 'builtin',
  inputSchema: {
    type: 'object',
    properties: {
      key: { type: 'string', minLength: 1, maxLength: 256, description: 'key, e.g. user.preferences' },
      // No type: every input is checked against this schema before the tool runs, and any JSON value may be stored.
      value: { description: 'the value to store: a string, or any JSON value' },
    },
    required: ['key', 'value'],
  },
  async execute(input, ctx) {
    const memory = memoryOf(deps);
    if (isOutput(memory)) return memory;
    const key = input.key;
    const problem = keyProblem(key) ?? accessProblem(ctx, 'memory_write', key as string);
    if (problem) return fail(problem);
    if (input.value === undefined) return fail("memory_store requires a 'value'");
    try {
      await memory.set(ctx.agent.id, key as string, input.value);
    } catch (err) {
      return failFrom(err, 'Failed to store the value');
    }
    return ok(`Stored value under key '${key as string}'.`);
  },
});
