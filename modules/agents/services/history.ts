/**
 * Stored messages → the model's message list, repaired before every model
 * call: no tool_use without its result, no orphan tool_result, no empty
 * message, alternating roles starting with the user, and adjacent text
 * blocks merged (message rule 4).
 */
import type { ChatMessage, ContentBlock } from '@talon/llm';
import type { StoredMessage } from '@talon/agents';

export const NOT_RUN_RESULT = 'Tool call not completed: the turn ended before it ran.';
/**
 * What the model reads for a reply stopped before its first word: without it the stopped message and the next one
 * would be adjacent user messages, merged into one, and the model would answer both as one request.
 */
export const STOPPED_BEFORE_REPLY = '[stopped by the user before replying]';

export function toChat(messages: readonly StoredMessage[], summary?: string | null, maxMessages = 0): ChatMessage[] {
  const chosen = maxMessages > 0 && messages.length > maxMessages ? messages.slice(-maxMessages) : messages;
  const chat: ChatMessage[] = chosen.map((m) => ({
    role: m.role === 'User' ? 'user' : 'assistant',
    content: m.blocks?.length ? m.blocks : [{ type: 'text', text: m.content || (m.stopped ? STOPPED_BEFORE_REPLY : '') }],
  }));
  if (summary) chat.unshift({ role: 'user', content: [{ type: 'text', text: `[Summary of the earlier conversation]\n${summary}` }] });
  return repair(chat);
}

export function repair(input: readonly ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const message of input) {
    let content = message.content.some(isEmptyText) ? message.content.filter((b) => !isEmptyText(b)) : message.content;
    if (content.some(isToolResult)) {
      if (message.role === 'user') {
        const prev = out[out.length - 1];
        const open = prev?.role === 'assistant' ? toolUseIds(prev.content) : undefined;
        content = content.filter((b) => b.type !== 'tool_result' || Boolean(open?.has(b.toolUseId)));
      } else {
        content = content.filter((b) => b.type !== 'tool_result');
      }
    }
    if (!content.length) continue;
    push(out, { role: message.role, content });
  }
  // Close every tool_use that has no result with a synthetic one.
  for (let i = 0; i < out.length; i++) {
    const ids = out[i].role === 'assistant' ? toolUseIds(out[i].content) : undefined;
    if (!ids) continue;
    const next = out[i + 1];
    const given = next?.role === 'user' ? next.content : [];
    if ([...ids].every((id) => given.some((b) => b.type === 'tool_result' && b.toolUseId === id))) continue;
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

const isEmptyText = (b: ContentBlock) => b.type === 'text' && b.text.length === 0;
const isToolResult = (b: ContentBlock) => b.type === 'tool_result';

/**
 * Adjacent text blocks become one (message rule 4). The repair runs before every model call over the whole history,
 * so the helpers below hand back their input when there is nothing to change (most messages are one text block).
 */
function mergeText(blocks: readonly ContentBlock[]): ContentBlock[] {
  if (!blocks.some((b, i) => b.type === 'text' && blocks[i - 1]?.type === 'text')) return blocks as ContentBlock[];
  const out: ContentBlock[] = [];
  for (const b of blocks) {
    const last = out[out.length - 1];
    if (b.type === 'text' && last?.type === 'text') out[out.length - 1] = { type: 'text', text: `${last.text}\n\n${b.text}` };
    else out.push(b);
  }
  return out;
}

export function textOf(blocks: readonly ContentBlock[]): string {
  let text = '';
  for (const b of blocks) if (b.type === 'text') text += b.text;
  return text;
}

/** Appends the message, or its content to the last message when that has the same role; the input is never changed. */
function push(out: ChatMessage[], message: ChatMessage): void {
  const last = out[out.length - 1];
  if (last?.role === message.role) last.content = [...last.content, ...message.content];
  else out.push({ role: message.role, content: message.content });
}

/** The ids of the tool calls in the blocks; undefined when there are none. */
function toolUseIds(blocks: readonly ContentBlock[]): Set<string> | undefined {
  let ids: Set<string> | undefined;
  for (const b of blocks) if (b.type === 'tool_use') (ids ??= new Set()).add(b.id);
  return ids;
}

/** Providers want a user message's tool results before anything else in it. */
function resultsFirst(blocks: readonly ContentBlock[]): ContentBlock[] {
  const firstOther = blocks.findIndex((b) => b.type !== 'tool_result');
  if (firstOther === -1 || !blocks.slice(firstOther).some(isToolResult)) return blocks as ContentBlock[];
  return [...blocks.filter(isToolResult), ...blocks.filter((b) => !isToolResult(b))];
}
