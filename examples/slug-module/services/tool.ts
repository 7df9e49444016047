import type { ToolDefinition } from '@talon/agents';
import type { Slugs } from './slugs.ts';

/** The slugs as an agent tool (grant "slugify" in an agent's [capabilities] tools); it acts for no agent in particular. */
export function slugTool(slugs: Slugs): ToolDefinition {
  return {
    name: 'slugify',
    description: 'Make a URL slug of a text: lower case, accents transliterated, words joined by the separator.',
    source: 'slug',
    requiresAgent: false,
    inputSchema: { type: 'object', properties: { text: { type: 'string', minLength: 1 } }, required: ['text'] },
    // A refusal (no letters or digits) is thrown and reaches the model as an error result.
    execute: async (input) => ({ content: slugs.make(String(input.text)) }),
  };
}
