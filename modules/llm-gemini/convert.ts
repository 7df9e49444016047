/** Talon's provider-neutral messages ↔ Gemini contents and parts. */
import type { Content, FunctionDeclaration, GenerateContentResponse, Part } from '@google/genai';
import type { ChatMessage, ContentBlock, StopReason, ToolSchema } from '@talon/llm';

export function toGeminiContents(messages: ChatMessage[]): Content[] {
  // Gemini answers a function call by name, while Talon's tool results carry the call id: map ids to names.
  const names = new Map<string, string>();
  for (const m of messages) for (const b of m.content) if (b.type === 'tool_use') names.set(b.id, b.name);
  return messages.map((m) => ({ role: m.role === 'assistant' ? 'model' : 'user', parts: m.content.map((b) => toPart(b, names)) }));
}

function toPart(b: ContentBlock, names: Map<string, string>): Part {
  switch (b.type) {
    case 'text':
      return { text: b.text };
    case 'image':
      return { inlineData: { mimeType: b.mediaType, data: b.data } };
    case 'tool_use':
      return { functionCall: { id: b.id, name: b.name, args: b.input } };
    case 'tool_result':
      return {
        functionResponse: { id: b.toolUseId, name: names.get(b.toolUseId) ?? b.toolUseId, response: b.isError ? { error: b.content } : { output: b.content } },
      };
  }
}

export function toGeminiTools(tools: ToolSchema[] | undefined): Array<{ functionDeclarations: FunctionDeclaration[] }> | undefined {
  if (!tools?.length) return undefined;
  // parametersJsonSchema takes full JSON Schema (parameters only takes Gemini's OpenAPI subset).
  return [{ functionDeclarations: tools.map((t) => ({ name: t.name, description: t.description, parametersJsonSchema: t.inputSchema })) }];
}

/** The text and function-call parts of one response (or stream chunk); calls without an id get a stable one. */
export function blocksOf(response: GenerateContentResponse, callIndex: { next: number }): ContentBlock[] {
  const out: ContentBlock[] = [];
  for (const part of response.candidates?.[0]?.content?.parts ?? []) {
    if (part.thought) continue;
    if (typeof part.text === 'string' && part.text) out.push({ type: 'text', text: part.text });
    if (part.functionCall) {
      const name = part.functionCall.name ?? '';
      out.push({ type: 'tool_use', id: part.functionCall.id ?? `call_${callIndex.next++}_${name}`, name, input: part.functionCall.args ?? {} });
    }
  }
  return out;
}

export function stopReason(finish: string | undefined, sawToolCalls: boolean): StopReason {
  if (sawToolCalls) return 'tool_use';
  if (finish === 'MAX_TOKENS') return 'max_tokens';
  return 'end_turn';
}
