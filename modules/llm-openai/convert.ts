/** Talon's provider-neutral messages ↔ OpenAI chat-completions messages. */
import type OpenAI from 'openai';
import type { ChatMessage, ContentBlock, StopReason, ToolSchema } from '@talon/llm';

type Param = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type Part = OpenAI.Chat.Completions.ChatCompletionContentPart;

export function toOpenaiMessages(system: string | undefined, messages: ChatMessage[]): Param[] {
  const out: Param[] = [];
  if (system) out.push({ role: 'system', content: system });
  for (const m of messages) {
    if (m.role === 'assistant') {
      const text = m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
      const calls = m.content.flatMap((b) =>
        b.type === 'tool_use' ? [{ id: b.id, type: 'function' as const, function: { name: b.name, arguments: JSON.stringify(b.input) } }] : [],
      );
      out.push({ role: 'assistant', content: text || null, ...(calls.length ? { tool_calls: calls } : {}) });
      continue;
    }
    // Tool results must directly follow the assistant message that asked for them, as role "tool" messages.
    for (const b of m.content) {
      if (b.type === 'tool_result') out.push({ role: 'tool', tool_call_id: b.toolUseId, content: b.isError ? `Error: ${b.content}` : b.content });
    }
    const parts = m.content.flatMap((b): Part[] => userPart(b));
    if (parts.length)
      out.push({ role: 'user', content: parts.every((p) => p.type === 'text') ? parts.map((p) => (p as { text: string }).text).join('\n') : parts });
  }
  return out;
}

function userPart(b: ContentBlock): Part[] {
  if (b.type === 'text') return [{ type: 'text', text: b.text }];
  if (b.type === 'image') return [{ type: 'image_url', image_url: { url: `data:${b.mediaType};base64,${b.data}` } }];
  return [];
}

export function toOpenaiTools(tools: ToolSchema[] | undefined): OpenAI.Chat.Completions.ChatCompletionFunctionTool[] | undefined {
  if (!tools?.length) return undefined;
  return tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.inputSchema } }));
}

export function stopReason(finish: string | null | undefined, sawToolCalls: boolean): StopReason {
  if (finish === 'tool_calls' || finish === 'function_call' || (sawToolCalls && finish === 'stop')) return 'tool_use';
  if (finish === 'length') return 'max_tokens';
  return 'end_turn';
}
