import type Anthropic from '@anthropic-ai/sdk';
import type { CompletionRequest, CompletionResult, ContentBlock, DriverKit, LlmDriver, ProviderTarget, StreamEvent } from '@talon/llm';
import { stopReason, toAnthropicMessages, toAnthropicTools } from './convert.ts';

/** Anthropic requires max_tokens; this is used when the caller gives none. */
const DEFAULT_MAX_TOKENS = 4096;

/** A driver for one Anthropic Messages endpoint. The llm service does retries and timeouts, so the SDK does neither. */
export function anthropicDriver(target: ProviderTarget, kit: DriverKit): LlmDriver {
  const client = kit.lazy(async () => {
    const { default: Anthropic } = await import('@anthropic-ai/sdk');
    return new Anthropic({
      apiKey: target.apiKey ?? null,
      authToken: null,
      // The SDK appends /v1/messages itself; a catalogue URL ending in /v1 would double it.
      baseURL: target.baseUrl.replace(/\/v1\/?$/, ''),
      maxRetries: 0,
      timeout: 24 * 3600 * 1000,
    });
  });
  const params = (request: CompletionRequest) => ({
    model: request.model,
    system: request.system || undefined,
    messages: toAnthropicMessages(request.messages),
    tools: toAnthropicTools(request.tools),
    max_tokens: request.maxTokens ?? DEFAULT_MAX_TOKENS,
    temperature: request.temperature,
  });

  return {
    async complete(request) {
      let message: Anthropic.Messages.Message;
      try {
        message = await (await client()).messages.create(params(request), { signal: request.signal });
      } catch (err) {
        throw kit.toLlmError(err, target.provider);
      }
      const content: ContentBlock[] = [];
      for (const b of message.content) {
        if (b.type === 'text') content.push({ type: 'text', text: b.text });
        else if (b.type === 'tool_use') content.push({ type: 'tool_use', id: b.id, name: b.name, input: (b.input ?? {}) as Record<string, unknown> });
      }
      return {
        content,
        stopReason: stopReason(message.stop_reason),
        usage: { inputTokens: message.usage.input_tokens, outputTokens: message.usage.output_tokens },
        provider: target.provider,
        model: message.model || request.model,
      };
    },

    async *stream(request): AsyncGenerator<StreamEvent> {
      const content: ContentBlock[] = [];
      // Open blocks by stream index; tool input arrives as partial JSON fragments.
      const open = new Map<number, { kind: 'text'; text: string } | { kind: 'tool'; id: string; name: string; json: string }>();
      let usage = { inputTokens: 0, outputTokens: 0 };
      let reason: string | null = null;
      let model = request.model;
      let stopped = false;
      try {
        const stream = await (await client()).messages.create({ ...params(request), stream: true }, { signal: request.signal });
        for await (const event of stream) {
          switch (event.type) {
            case 'message_start':
              model = event.message.model || model;
              usage = { inputTokens: event.message.usage.input_tokens, outputTokens: event.message.usage.output_tokens };
              break;
            case 'content_block_start':
              if (event.content_block.type === 'text') {
                open.set(event.index, { kind: 'text', text: event.content_block.text });
                if (event.content_block.text) yield { type: 'text_delta', text: event.content_block.text };
              } else if (event.content_block.type === 'tool_use') {
                open.set(event.index, { kind: 'tool', id: event.content_block.id, name: event.content_block.name, json: '' });
                yield { type: 'tool_use_start', id: event.content_block.id, name: event.content_block.name };
              }
              break;
            case 'content_block_delta': {
              const block = open.get(event.index);
              if (event.delta.type === 'text_delta' && block?.kind === 'text') {
                block.text += event.delta.text;
                yield { type: 'text_delta', text: event.delta.text };
              } else if (event.delta.type === 'input_json_delta' && block?.kind === 'tool') {
                block.json += event.delta.partial_json;
              }
              break;
            }
            case 'content_block_stop': {
              const block = open.get(event.index);
              open.delete(event.index);
              if (block?.kind === 'text') content.push({ type: 'text', text: block.text });
              else if (block?.kind === 'tool') {
                const input = kit.parseToolInput(block.json);
                content.push({ type: 'tool_use', id: block.id, name: block.name, input });
                yield { type: 'tool_use_end', id: block.id, name: block.name, input };
              }
              break;
            }
            case 'message_stop':
              stopped = true;
              break;
            case 'message_delta':
              reason = event.delta.stop_reason ?? reason;
              usage = { inputTokens: event.usage.input_tokens ?? usage.inputTokens, outputTokens: event.usage.output_tokens };
              break;
          }
        }
      } catch (err) {
        throw kit.toLlmError(err, target.provider);
      }
      // A stream cut before message_stop is a failure, not a short answer.
      if (!stopped) throw kit.error(`provider '${target.provider}' ended the stream before finishing the answer`, { provider: target.provider });
      const result: CompletionResult = { content, stopReason: stopReason(reason), usage, provider: target.provider, model };
      yield { type: 'done', result };
    },
  };
}
