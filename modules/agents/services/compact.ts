/**
 * Compaction: the LLM summarises the older messages of the current session;
 * the summary replaces them and the most recent `keep_recent` stay verbatim.
 */
import type { StoredMessage } from '@talon/agents';
import { textOf } from './history.ts';
import type { LoopDeps } from './loop.ts';
import { llmFailure, modelRef } from './model.ts';

const INSTRUCTIONS =
  "You compress conversations. Summarise the conversation below so that an assistant can continue it: keep facts, decisions, names, numbers, open tasks and the user's preferences. Answer with the summary only.";

export async function compactSession(deps: LoopDeps, agentId: string): Promise<{ message: string }> {
  const agent = deps.registry.require(agentId);
  const sessionId = agent.sessionId;
  const keep = deps.config().compaction.keep_recent;
  const messages = await deps.sessions.messages(sessionId);
  if (messages.length <= keep) return { message: `No compaction needed (${messages.length} messages, ${keep} are kept verbatim)` };
  const older = messages.slice(0, messages.length - keep);
  const previous = (await deps.sessions.get(sessionId))?.summary;
  const transcript = [previous ? `Earlier summary:\n${previous}\n` : '', ...older.map(line)].join('\n');
  let summary: string;
  try {
    const result = await deps.llm.complete(modelRef(agent), {
      system: INSTRUCTIONS,
      messages: [{ role: 'user', content: [{ type: 'text', text: transcript }] }],
      maxTokens: 1024,
      meta: { agentId, sessionId, purpose: 'compact' },
    });
    summary = textOf(result.content).trim();
  } catch (err) {
    throw llmFailure(err);
  }
  if (!summary) summary = transcript.slice(-4000);
  const dropped = await deps.sessions.replaceWithSummary(sessionId, summary, keep);
  const kept = messages.length - dropped;
  return { message: `Compacted ${dropped} messages into a summary (${summary.length} chars), kept ${kept} recent messages.` };
}

function line(m: StoredMessage): string {
  const parts = [m.content];
  for (const b of m.blocks ?? []) {
    if (b.type === 'tool_use') parts.push(`[called ${b.name} ${JSON.stringify(b.input)}]`);
    else if (b.type === 'tool_result') parts.push(`[tool result: ${b.content.slice(0, 500)}]`);
    else if (b.type === 'text' && !m.content.includes(b.text)) parts.push(b.text);
  }
  return `${m.role}: ${parts.filter(Boolean).join(' ')}`;
}
