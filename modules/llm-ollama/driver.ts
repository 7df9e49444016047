import type * as OllamaLib from 'ollama';
import type { ChatRequest } from 'ollama';
import { lazyRequire } from '@talon/module-sdk';
import type { CompletionRequest, CompletionResult, ContentBlock, DriverKit, LlmDriver, ProviderTarget, StreamEvent } from '@talon/llm';
import { stopReason, toOllamaMessages, toOllamaTools, toolUses } from './convert.ts';

/** The Ollama client is loaded with the first call to an Ollama server, not at start-up. */
const ollama = lazyRequire<typeof OllamaLib>(import.meta.url, 'ollama');

/** A driver for one Ollama server (native API). A client per request carries that request's abort signal in its fetch. */
export function ollamaDriver(target: ProviderTarget, kit: DriverKit): LlmDriver {
  // The catalogue or [provider_urls] may name the OpenAI-compatible /v1 endpoint; the native API lives at the root.
  const host = target.baseUrl.replace(/\/v1\/?$/, '');
  const client = (signal?: AbortSignal) =>
    new (ollama().Ollama)({
      host,
      fetch: kit.failingFetch(target.provider, signal),
      ...(target.apiKey ? { headers: { authorization: `Bearer ${target.apiKey}` } } : {}),
    });
  const params = (request: CompletionRequest): ChatRequest => ({
    model: request.model,
    messages: toOllamaMessages(request.system, request.messages),
    tools: toOllamaTools(request.tools),
    options: {
      ...(request.maxTokens !== undefined ? { num_predict: request.maxTokens } : {}),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    },
  });

  return {
    async complete(request) {
      try {
        const r = await client(request.signal).chat({ ...params(request), stream: false });
        const content: ContentBlock[] = r.message.content ? [{ type: 'text', text: r.message.content }] : [];
        content.push(...toolUses(r.message.tool_calls, 0));
        return {
          content,
          stopReason: stopReason(
            r.done_reason,
            content.some((b) => b.type === 'tool_use'),
          ),
          usage: { inputTokens: r.prompt_eval_count ?? 0, outputTokens: r.eval_count ?? 0 },
          provider: target.provider,
          model: r.model || request.model,
        };
      } catch (err) {
        throw kit.toLlmError(err, target.provider);
      }
    },

    async *stream(request): AsyncGenerator<StreamEvent> {
      let text = '';
      const calls: ContentBlock[] = [];
      let result: CompletionResult | undefined;
      try {
        for await (const chunk of await client(request.signal).chat({ ...params(request), stream: true })) {
          if (chunk.message?.content) {
            text += chunk.message.content;
            yield { type: 'text_delta', text: chunk.message.content };
          }
          // Tool calls arrive whole, so start and end come together.
          for (const call of toolUses(chunk.message?.tool_calls, calls.length)) {
            calls.push(call);
            yield { type: 'tool_use_start', id: call.id, name: call.name };
            yield { type: 'tool_use_end', id: call.id, name: call.name, input: call.input };
          }
          if (chunk.done) {
            result = {
              content: [...(text ? [{ type: 'text' as const, text }] : []), ...calls],
              stopReason: stopReason(chunk.done_reason, calls.length > 0),
              usage: { inputTokens: chunk.prompt_eval_count ?? 0, outputTokens: chunk.eval_count ?? 0 },
              provider: target.provider,
              model: chunk.model || request.model,
            };
          }
        }
      } catch (err) {
        throw kit.toLlmError(err, target.provider);
      }
      if (result) yield { type: 'done', result };
    },
  };
}
