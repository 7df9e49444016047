import type { GenerateContentParameters, GenerateContentResponse } from '@google/genai';
import type { CompletionRequest, CompletionResult, ContentBlock, DriverKit, LlmDriver, ProviderTarget, StreamEvent, Usage } from '@talon/llm';
import { blocksOf, stopReason, toGeminiContents, toGeminiTools } from './convert.ts';

/** A driver for one Gemini endpoint. No SDK retries (none are configured); errors keep their Retry-After through failingFetch. */
export function geminiDriver(target: ProviderTarget, kit: DriverKit): LlmDriver {
  const client = kit.lazy(async () => {
    const { GoogleGenAI } = await import('@google/genai');
    return new GoogleGenAI({
      apiKey: target.apiKey,
      // The SDK appends /v1beta/models/...; a catalogue URL that already ends in a version would double it.
      httpOptions: { baseUrl: target.baseUrl.replace(/\/v1(beta)?\/?$/, ''), fetch: kit.failingFetch(target.provider) },
    });
  });
  const params = (request: CompletionRequest): GenerateContentParameters => ({
    model: request.model,
    contents: toGeminiContents(request.messages),
    config: {
      systemInstruction: request.system || undefined,
      tools: toGeminiTools(request.tools),
      maxOutputTokens: request.maxTokens,
      temperature: request.temperature,
      abortSignal: request.signal,
    },
  });
  const usageOf = (r: GenerateContentResponse): Usage | undefined =>
    r.usageMetadata
      ? {
          inputTokens: r.usageMetadata.promptTokenCount ?? 0,
          outputTokens: (r.usageMetadata.candidatesTokenCount ?? 0) + (r.usageMetadata.thoughtsTokenCount ?? 0),
        }
      : undefined;

  return {
    async complete(request) {
      let response: GenerateContentResponse;
      try {
        response = await (await client()).models.generateContent(params(request));
      } catch (err) {
        throw kit.toLlmError(err, target.provider);
      }
      const content = blocksOf(response, { next: 0 });
      return {
        content,
        stopReason: stopReason(
          response.candidates?.[0]?.finishReason,
          content.some((b) => b.type === 'tool_use'),
        ),
        usage: usageOf(response) ?? { inputTokens: 0, outputTokens: 0 },
        provider: target.provider,
        model: response.modelVersion || request.model,
      };
    },

    async *stream(request): AsyncGenerator<StreamEvent> {
      const content: ContentBlock[] = [];
      const callIndex = { next: 0 };
      let usage: Usage = { inputTokens: 0, outputTokens: 0 };
      let finish: string | undefined;
      let model = request.model;
      try {
        for await (const chunk of await (await client()).models.generateContentStream(params(request))) {
          usage = usageOf(chunk) ?? usage;
          finish = chunk.candidates?.[0]?.finishReason ?? finish;
          model = chunk.modelVersion || model;
          for (const block of blocksOf(chunk, callIndex)) {
            if (block.type === 'text') {
              const last = content[content.length - 1];
              if (last?.type === 'text') last.text += block.text;
              else content.push({ ...block });
              yield { type: 'text_delta', text: block.text };
            } else if (block.type === 'tool_use') {
              // Gemini delivers each function call whole, so start and end come together.
              content.push(block);
              yield { type: 'tool_use_start', id: block.id, name: block.name };
              yield { type: 'tool_use_end', id: block.id, name: block.name, input: block.input };
            }
          }
        }
      } catch (err) {
        throw kit.toLlmError(err, target.provider);
      }
      // A stream cut before the chunk carrying finishReason is a failure, not a short answer.
      if (!finish) throw kit.error(`provider '${target.provider}' ended the stream before finishing the answer`, { provider: target.provider });
      const result: CompletionResult = {
        content,
        stopReason: stopReason(
          finish,
          content.some((b) => b.type === 'tool_use'),
        ),
        usage,
        provider: target.provider,
        model,
      };
      yield { type: 'done', result };
    },
  };
}
