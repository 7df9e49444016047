import type OpenAI from 'openai';
import type { CompletionRequest, CompletionResult, ContentBlock, DriverKit, LlmDriver, ProviderTarget, StreamEvent } from '@talon/llm';
import { stopReason, toOpenaiMessages, toOpenaiTools } from './convert.ts';
import { openaiTransport } from './transport.ts';

type Completion = OpenAI.Chat.Completions.ChatCompletion;
type Chunk = OpenAI.Chat.Completions.ChatCompletionChunk;

/** A driver for one OpenAI-compatible endpoint. The llm service does retries and timeouts; the transport does neither. */
export function openaiDriver(target: ProviderTarget, kit: DriverKit): LlmDriver {
  const transport = openaiTransport(target, kit);
  const params = (request: CompletionRequest) => ({
    model: request.model,
    messages: toOpenaiMessages(request.system, request.messages),
    tools: toOpenaiTools(request.tools),
    max_tokens: request.maxTokens,
    temperature: request.temperature,
  });

  return {
    async complete(request) {
      let response: Completion;
      try {
        response = await transport.json<Completion>('/chat/completions', params(request), request.signal);
      } catch (err) {
        throw kit.toLlmError(err, target.provider);
      }
      const choice = response.choices?.[0];
      const content: ContentBlock[] = [];
      if (choice?.message.content) content.push({ type: 'text', text: choice.message.content });
      for (const call of choice?.message.tool_calls ?? []) {
        if (call.type === 'function')
          content.push({ type: 'tool_use', id: call.id, name: call.function.name, input: kit.parseToolInput(call.function.arguments) });
      }
      return {
        content,
        stopReason: stopReason(
          choice?.finish_reason,
          content.some((b) => b.type === 'tool_use'),
        ),
        usage: { inputTokens: response.usage?.prompt_tokens ?? 0, outputTokens: response.usage?.completion_tokens ?? 0 },
        provider: target.provider,
        model: response.model || request.model,
      };
    },

    async *stream(request): AsyncGenerator<StreamEvent> {
      let text = '';
      // Tool-call deltas arrive by index: the first carries id and name, the rest argument fragments.
      const calls = new Map<number, { id: string; name: string; args: string }>();
      let finish: string | null = null;
      let usage = { inputTokens: 0, outputTokens: 0 };
      let model = request.model;
      try {
        const stream = transport.events<Chunk>(
          '/chat/completions',
          { ...params(request), stream: true, stream_options: { include_usage: true } },
          request.signal,
        );
        for await (const chunk of stream) {
          if (chunk.model) model = chunk.model;
          if (chunk.usage) usage = { inputTokens: chunk.usage.prompt_tokens, outputTokens: chunk.usage.completion_tokens };
          const choice = chunk.choices?.[0];
          if (!choice) continue;
          if (choice.delta.content) {
            text += choice.delta.content;
            yield { type: 'text_delta', text: choice.delta.content };
          }
          for (const d of choice.delta.tool_calls ?? []) {
            let call = calls.get(d.index);
            if (!call) {
              call = { id: d.id ?? `call_${d.index}`, name: d.function?.name ?? '', args: '' };
              calls.set(d.index, call);
              yield { type: 'tool_use_start', id: call.id, name: call.name };
            }
            call.args += d.function?.arguments ?? '';
          }
          if (choice.finish_reason) finish = choice.finish_reason;
        }
      } catch (err) {
        throw kit.toLlmError(err, target.provider);
      }
      // A stream cut before its finish_reason is a failure, not a short answer.
      if (!finish) throw kit.error(`provider '${target.provider}' ended the stream before finishing the answer`, { provider: target.provider });
      const content: ContentBlock[] = text ? [{ type: 'text', text }] : [];
      for (const [, call] of [...calls].sort(([a], [b]) => a - b)) {
        const input = kit.parseToolInput(call.args);
        yield { type: 'tool_use_end', id: call.id, name: call.name, input };
        content.push({ type: 'tool_use', id: call.id, name: call.name, input });
      }
      const result: CompletionResult = { content, stopReason: stopReason(finish, calls.size > 0), usage, provider: target.provider, model };
      yield { type: 'done', result };
    },
  };
}
