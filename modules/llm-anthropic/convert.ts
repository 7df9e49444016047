/** Talon's provider-neutral messages ↔ Anthropic Messages API blocks. */
import type Anthropic from '@anthropic-ai/sdk';
import type { ChatMessage, ContentBlock, StopReason, ToolSchema } from '@talon/llm';

type Block = Anthropic.Messages.ContentBlockParam;
type ImageMediaType = Anthropic.Messages.Base64ImageSource['media_type'];

export function toAnthropicMessages(messages: ChatMessage[]): Anthropic.Messages.MessageParam[] {
  return messages.map((m) => ({ role: m.role, content: m.content.map(toBlock) }));
}

function toBlock(b: ContentBlock): Block {
  switch (b.type) {
    case 'text':
      return { type: 'text', text: b.text };
    case 'image':
      return { type: 'image', source: { type: 'base64', media_type: b.mediaType as ImageMediaType, data: b.data } };
    case 'tool_use':
      return { type: 'tool_use', id: b.id, name: b.name, input: b.input };
    case 'tool_result':
      return { type: 'tool_result', tool_use_id: b.toolUseId, content: b.content, ...(b.isError ? { is_error: true } : {}) };
  }
}

export function toAnthropicTools(tools: ToolSchema[] | undefined): Anthropic.Messages.Tool[] | undefined {
  if (!tools?.length) return undefined;
  return tools.map((t) => ({ name: t.name, description: t.description, input_schema: { type: 'object', ...t.inputSchema } }));
}

export function stopReason(reason: string | null | undefined): StopReason {
  if (reason === 'tool_use') return 'tool_use';
  if (reason === 'max_tokens' || reason === 'model_context_window_exceeded') return 'max_tokens';
  if (reason === 'stop_sequence') return 'stop_sequence';
  return 'end_turn';
}
