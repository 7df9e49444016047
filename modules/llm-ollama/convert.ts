/** Talon's provider-neutral messages ↔ Ollama /api/chat messages. */
import type { Message, Tool, ToolCall } from 'ollama';
import type { ChatMessage, ContentBlock, StopReason, ToolSchema } from '@talon/llm';

export function toOllamaMessages(system: string | undefined, messages: ChatMessage[]): Message[] {
  // Ollama answers a tool call by tool name, while Talon's tool results carry the call id: map ids to names.
  const names = new Map<string, string>();
  for (const m of messages) for (const b of m.content) if (b.type === 'tool_use') names.set(b.id, b.name);
  const out: Message[] = system ? [{ role: 'system', content: system }] : [];
  for (const m of messages) {
    const text = m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n');
    const images = m.content.flatMap((b) => (b.type === 'image' ? [b.data] : []));
    if (m.role === 'assistant') {
      const calls: ToolCall[] = m.content.flatMap((b) => (b.type === 'tool_use' ? [{ function: { name: b.name, arguments: b.input } }] : []));
      out.push({ role: 'assistant', content: text, ...(calls.length ? { tool_calls: calls } : {}) });
      continue;
    }
    for (const b of m.content) {
      if (b.type === 'tool_result')
        out.push({ role: 'tool', content: b.isError ? `Error: ${b.content}` : b.content, tool_name: names.get(b.toolUseId) ?? b.toolUseId });
    }
    if (text || images.length) out.push({ role: 'user', content: text, ...(images.length ? { images } : {}) });
  }
  return out;
}

export function toOllamaTools(tools: ToolSchema[] | undefined): Tool[] | undefined {
  if (!tools?.length) return undefined;
  return tools.map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: t.inputSchema as NonNullable<Tool['function']['parameters']> },
  }));
}

/** Ollama's tool calls carry no id: give each a stable one from its position in the answer. */
export function toolUses(calls: ToolCall[] | undefined, start: number): Extract<ContentBlock, { type: 'tool_use' }>[] {
  return (calls ?? []).map((c, i) => ({
    type: 'tool_use',
    id: `call_${start + i}_${c.function.name}`,
    name: c.function.name,
    input: (c.function.arguments ?? {}) as Record<string, unknown>,
  }));
}

export function stopReason(doneReason: string | undefined, sawToolCalls: boolean): StopReason {
  if (sawToolCalls) return 'tool_use';
  if (doneReason === 'length') return 'max_tokens';
  return 'end_turn';
}
