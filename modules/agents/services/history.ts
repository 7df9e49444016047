/**
 * Stored messages → the model's message list, repaired before every model
 * call: no tool_use without its result, no orphan tool_result, no empty
 * message, alternating roles starting with the user, and adjacent text
 * blocks merged (message rule 4).
 */
import type { ChatMessage, ContentBlock } from '@talon/llm';
import type { StoredMessage } from '@talon/agents';

export const NOT_RUN_RESULT = 'Tool call not completed: the turn ended before it ran.';

export function toChat(messages: readonly StoredMessage[], summary?: string | null, maxMessages = 0): ChatMessage[] {
  const chosen = maxMessages > 0 && messages.length > maxMessages ? messages.slice(-maxMessages) : messages;
  const chat: ChatMessage[] = chosen.map((m) => ({
    role: m.role === 'User' ? 'user' : 'assistant',
    content: m.blocks?.length ? m.blocks : m.content ? [{ type: 'text', text: m.content }] : [],
  }));
  if (summary) chat.unshift({ role: 'user', content: [{ type: 'text', text: `[Summary of the earlier conversation]\n${summary}` }] });
  return repair(chat);
}

export function repair(input: readonly ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const message of input) {
    let content = message.content.filter((b) => b.type !== 'text' || b.text.length > 0);
    if (message.role === 'user') {
      const prev = out[out.length - 1];
      const open = prev?.role === 'assistant' ? toolUseIds(prev.content) : new Set<string>();
      content = content.filter((b) => b.type !== 'tool_result' || open.has(b.toolUseId));
    } else {
      content = content.filter((b) => b.type !== 'tool_result');
    }
    if (!content.length) continue;
    push(out, { role: message.role, content });
  }
  // Close every tool_use that has no result with a synthetic one.
  for (let i = 0; i < out.length; i++) {
    const ids = out[i].role === 'assistant' ? toolUseIds(out[i].content) : new Set<string>();
    if (!ids.size) continue;
    const next = out[i + 1];
    const answered = next?.role === 'user' ? new Set(next.content.flatMap((b) => (b.type === 'tool_result' ? [b.toolUseId] : []))) : new Set<string>();
    if ([...ids].every((id) => answered.has(id))) continue;
    const given = next?.role === 'user' ? next.content : [];
    // Results in the order of the calls, a synthetic one for each call that has none.
    const results = [...ids].map(
      (id): ContentBlock =>
        given.find((b) => b.type === 'tool_result' && b.toolUseId === id) ?? { type: 'tool_result', toolUseId: id, content: NOT_RUN_RESULT, isError: true },
    );
    const rest = given.filter((b) => b.type !== 'tool_result');
    if (next?.role === 'user') next.content = [...results, ...rest];
    else out.splice(i + 1, 0, { role: 'user', content: results });
  }
  while (out.length && out[0].role !== 'user') out.shift();
  for (const m of out) {
    m.content = mergeText(m.role === 'user' ? resultsFirst(m.content) : m.content);
  }
  return out;
}

/** Adjacent text blocks become one (message rule 4). */
function mergeText(blocks: readonly ContentBlock[]): ContentBlock[] {
  const out: ContentBlock[] = [];
  for (const b of blocks) {
    const last = out[out.length - 1];
    if (b.type === 'text' && last?.type === 'text') out[out.length - 1] = { type: 'text', text: `${last.text}\n\n${b.text}` };
    else out.push(b);
  }
  return out;
}

export function textOf(blocks: readonly ContentBlock[]): string {
  return blocks.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
}

function push(out: ChatMessage[], message: ChatMessage): void {
  const last = out[out.length - 1];
  if (last?.role === message.role) last.content = [...last.content, ...message.content];
  else out.push({ role: message.role, content: [...message.content] });
}

function toolUseIds(blocks: readonly ContentBlock[]): Set<string> {
  return new Set(blocks.flatMap((b) => (b.type === 'tool_use' ? [b.id] : [])));
}

/** Providers want a user message's tool results before anything else in it. */
function resultsFirst(blocks: readonly ContentBlock[]): ContentBlock[] {
  return [...blocks.filter((b) => b.type === 'tool_result'), ...blocks.filter((b) => b.type !== 'tool_result')];
}
