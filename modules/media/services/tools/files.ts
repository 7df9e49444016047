/**
 * media_transcribe and media_describe: tools over a file the agent has (an upload or a generated file, by file_id).
 * Long audio is transcribed a window at a time (start_sec, max_secs → has_more, next_start_sec), cut to 16 kHz mono
 * WAV by the kit's convert, so that one call stays within the provider's limits and the model's context.
 */
import type { ToolContext, ToolDefinition } from '@talon/agents';
import type { ModelRef } from '@talon/llm';
import { callMeta, done, failure, FILE_NOT_FOUND, ownerOf, type ToolDeps } from './common.ts';

const source = 'media';
const DEFAULT_WINDOW_SECS = 600;

const transcribeSchema = {
  type: 'object',
  properties: {
    file_id: { type: 'string', description: 'the file_id of an audio (or video) file: an attachment or a generated file' },
    start_sec: { type: 'number', minimum: 0, description: 'where to start, in seconds (default 0)' },
    max_secs: { type: 'number', minimum: 1, maximum: 3600, description: `how many seconds to transcribe in this call (default ${DEFAULT_WINDOW_SECS})` },
    language: { type: 'string', description: "a language tag ('en'), when known" },
    provider: { type: 'string', description: 'a media provider with Transcription; default: the first configured one' },
  },
  required: ['file_id'],
} as const;

export function fileTools(deps: ToolDeps): ToolDefinition[] {
  return [
    {
      name: 'media_transcribe',
      source,
      description:
        'Transcribe an audio file to text. Long recordings come a window at a time: when has_more is true, call again with start_sec = next_start_sec.',
      inputSchema: transcribeSchema,
      async execute(input, ctx) {
        try {
          return done(await transcribeWindow(deps, input, ctx));
        } catch (err) {
          return failure('media_transcribe', err);
        }
      },
    },
    describeTool(deps),
  ];
}

async function transcribeWindow(deps: ToolDeps, input: Record<string, unknown>, ctx: ToolContext) {
  const file = await deps.files().read(String(input.file_id), ownerOf(ctx));
  if (!file) throw new Error(FILE_NOT_FOUND);
  const info = await deps.kit.probe(file.bytes);
  const total = (info.durationMs ?? 0) / 1000;
  const start = typeof input.start_sec === 'number' ? input.start_sec : 0;
  const window = typeof input.max_secs === 'number' ? input.max_secs : DEFAULT_WINDOW_SECS;
  if (total && start >= total) throw new Error(`start_sec ${start} is past the end of the audio (${total.toFixed(1)} s)`);
  // The whole file when it fits the window; otherwise the window, cut (ffmpeg seeks before decoding).
  const whole = start === 0 && total > 0 && total <= window;
  const audio = whole ? file.bytes : await deps.kit.convert(file.bytes, 'wav', { startSec: start, maxSecs: window, sampleRate: 16000, channels: 1 });
  const language = typeof input.language === 'string' ? input.language : undefined;
  const provider = typeof input.provider === 'string' ? input.provider : undefined;
  const heard = await deps.service.transcribe({ audio, language, provider }, callMeta(ctx));
  const end = start + window;
  const hasMore = total > end;
  return {
    text: heard.text,
    provider: heard.provider,
    model: heard.model,
    start_sec: start,
    duration_secs: Math.round(total * 1000) / 1000,
    has_more: hasMore,
    ...(hasMore ? { next_start_sec: end } : {}),
  };
}

function describeTool(deps: ToolDeps): ToolDefinition {
  return {
    name: 'media_describe',
    source,
    description: 'Describe an image file (by file_id) with a vision-capable model; an optional question says what to look for.',
    inputSchema: {
      type: 'object',
      properties: {
        file_id: { type: 'string', description: 'the file_id of an image: an attachment or a generated image' },
        prompt: { type: 'string', description: 'what to describe or ask about the image (default: a full description)' },
      },
      required: ['file_id'],
    },
    async execute(input, ctx) {
      try {
        const llm = deps.llm();
        if (!llm) throw new Error('the llm module is not running');
        const file = await deps.files().read(String(input.file_id), ownerOf(ctx));
        if (!file) throw new Error(FILE_NOT_FOUND);
        if (!file.content_type.startsWith('image/')) throw new Error(`file '${String(input.file_id)}' is ${file.content_type}, not an image`);
        const question = typeof input.prompt === 'string' && input.prompt.trim() ? input.prompt : 'Describe this image in detail.';
        const result = await llm.complete(visionModel(deps, ctx.agent.model), {
          messages: [
            {
              role: 'user',
              content: [
                { type: 'image', mediaType: file.content_type, data: file.bytes.toString('base64') },
                { type: 'text', text: question },
              ],
            },
          ],
          maxTokens: 1024,
          signal: ctx.signal,
          meta: { agentId: callMeta(ctx).agentId, purpose: 'media_describe' },
        });
        const text = result.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
        return done({ description: text, model: result.model, provider: result.provider });
      } catch (err) {
        return failure('media_describe', err);
      }
    },
  };
}

/** The agent's own model when the catalogue does not say it lacks vision; else the first keyed vision model. */
function visionModel(deps: ToolDeps, own: { provider: string; model: string }): ModelRef {
  const known = own.model ? deps.catalog.model(own.model) : undefined;
  if (own.model && (!known || known.supports_vision)) return own;
  const other = deps.catalog.models().find((m) => m.supports_vision && deps.catalog.apiKey(m.provider) !== undefined);
  if (!other) throw new Error('no vision-capable model is configured: set the key of a provider with one (GET /api/models)');
  return { provider: other.provider, model: other.id };
}
