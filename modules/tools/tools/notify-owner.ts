import type { ToolFactory } from '../services/deps.ts';
import { fail, ok } from '../services/result.ts';

const MAX_CHARS = 4096;
const MISSING = "Error: notify_owner requires non-empty 'reason' and 'summary' string fields.";

/** Control characters are dropped (a notice is one line of plain text); each field is capped. */
function clean(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  // eslint-disable-next-line no-control-regex
  const text = [...value.replace(/[\u0000-\u001f\u007f-\u009f]/g, '').trim()].slice(0, MAX_CHARS).join('');
  return text || undefined;
}

export const notifyOwnerTool: ToolFactory = () => ({
  name: 'notify_owner',
  requiresAgent: true,
  description: "Send a private notice to the agent's owner (operator DM) WITHOUT posting it to the source chat.",
  source: 'builtin',
  inputSchema: {
    type: 'object',
    properties: {
      reason: { type: 'string', description: 'short reason for the notice' },
      summary: { type: 'string', description: 'what the owner should know' },
    },
    required: ['reason', 'summary'],
  },
  async execute(input, ctx) {
    const reason = clean(input.reason);
    const summary = clean(input.summary);
    if (!reason || !summary) return fail(MISSING);
    ctx.notifyOwner(`[NOTIFY] ${reason}: ${summary}`);
    return ok('Notice queued for the owner. Do not repeat the summary in your public reply.');
  },
});
