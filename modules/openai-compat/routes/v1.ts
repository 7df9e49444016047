import { randomUUID } from 'node:crypto';
import { openSse, type FastifyReply, type FastifyRequest, type Routes, type SseWriter } from '@talon/module-sdk';
import type { AgentRegistry, AgentRunner, TurnRequest, TurnResult } from '@talon/agents';
import { openAiError, toOpenAiError } from '../services/errors.ts';
import { lastUserTurn, type ChatMessageInput } from '../services/messages.ts';
import { MODEL_PREFIX, resolveAgent } from '../services/resolve.ts';

const part = {
  type: 'object',
  properties: {
    type: { type: 'string' },
    text: { type: 'string' },
    image_url: { anyOf: [{ type: 'string' }, { type: 'object', properties: { url: { type: 'string' } } }] },
  },
  required: ['type'],
} as const;

// Types are checked here; what the spec requires (model, a user message) is checked in the handler, so the
// error carries the OpenAI code clients look for.
const completionSchema = {
  summary: 'Runs one agent turn, addressed by model name, in the OpenAI chat-completions format',
  body: {
    type: 'object',
    properties: {
      model: { type: 'string' },
      messages: {
        type: 'array',
        items: {
          type: 'object',
          properties: { role: { type: 'string' }, content: { anyOf: [{ type: 'string' }, { type: 'array', items: part }, { type: 'null' }] } },
          required: ['role'],
        },
      },
      stream: { type: 'boolean' },
      temperature: { type: 'number', minimum: 0, maximum: 2 },
      max_tokens: { type: 'integer', minimum: 1 },
    },
  },
} as const;

interface Deps {
  registry: () => AgentRegistry;
  runner: () => AgentRunner;
}

type Chunk = { content?: string; role?: 'assistant' };

export function v1Routes(app: Routes, deps: Deps): void {
  // Encapsulated: /v1 errors keep the OpenAI shape instead of the service-wide {error: string}.
  app.setErrorHandler((error, request, reply) => {
    const result = toOpenAiError(error);
    if (result.internal) request.log.error({ err: error }, 'chat completion failed');
    else request.log.debug({ statusCode: result.status, error: result.body.error.message }, 'chat completion refused');
    if (result.headers) reply.headers(result.headers);
    return reply.code(result.status).type('application/json; charset=utf-8').send(result.body);
  });

  app.get('/v1/models', { schema: { summary: 'Agents as chat-completions models (svc:<agent name>)' } }, async () => ({
    object: 'list',
    data: deps
      .registry()
      .list()
      .map((a) => ({ id: `${MODEL_PREFIX}${a.name}`, object: 'model', created: seconds(a.createdAt), owned_by: 'talon' })),
  }));

  app.post('/v1/chat/completions', { schema: completionSchema, config: { rateCost: 5 } }, async (request, reply) => {
    const body = request.body;
    if (typeof body.model !== 'string' || !body.model)
      throw openAiError(400, "'model' is required: use an agent name, svc:<agent name> or an agent id", 'missing_model');
    const input = lastUserTurn(body.messages as ChatMessageInput[] | undefined);
    const agent = resolveAgent(deps.registry(), body.model);
    if (!agent) throw openAiError(404, `no agent serves model '${body.model}': the service has no agents`, 'model_not_found');
    const controller = new AbortController();
    const turn: TurnRequest = {
      agentId: agent.id,
      message: input.message,
      images: input.images.length ? input.images : undefined,
      temperature: body.temperature,
      maxTokens: body.max_tokens,
      signal: controller.signal,
      origin: 'v1',
    };
    const meta = { id: `chatcmpl-${randomUUID()}`, created: Math.floor(Date.now() / 1000), model: agent.name };
    if (body.stream) return streamCompletion(request, reply, deps.runner(), turn, controller, meta);
    reply.raw.on('close', () => {
      if (!reply.raw.writableFinished) controller.abort();
    });
    const result = await deps.runner().run(turn);
    return {
      id: meta.id,
      object: 'chat.completion',
      created: meta.created,
      model: meta.model,
      choices: [{ index: 0, message: { role: 'assistant', content: result.response }, finish_reason: 'stop' }],
      usage: usage(result),
    };
  });
}

/**
 * SSE in the chat.completion.chunk format. The stream opens with the first
 * thing the agent produces, so a turn refused up front (budget, quota, a
 * provider error) still answers with its HTTP status and an error body.
 */
async function streamCompletion(
  request: FastifyRequest,
  reply: FastifyReply,
  runner: AgentRunner,
  turn: TurnRequest,
  controller: AbortController,
  meta: { id: string; created: number; model: string },
): Promise<void> {
  let sse: SseWriter | undefined;
  let finished = false;
  let streamed = false;
  const chunk = (delta: Chunk, finish: 'stop' | null = null) => ({
    ...meta,
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const open = (): SseWriter => {
    if (sse) return sse;
    sse = openSse(request, reply);
    sse.onClose(() => {
      if (!finished) controller.abort();
    });
    sse.send(undefined, chunk({ role: 'assistant', content: '' }));
    return sse;
  };
  let result: TurnResult;
  try {
    result = await runner.run(turn, (event) => {
      if (event.type === 'text_delta') {
        streamed = true;
        open().send(undefined, chunk({ content: event.content }));
      } else if (event.type === 'tool_use') open();
    });
  } catch (err) {
    finished = true;
    if (!sse) throw err;
    const failure = toOpenAiError(err);
    if (failure.internal) request.log.error({ err }, 'streamed chat completion failed');
    sse.send(undefined, failure.body);
    sse.send(undefined, '[DONE]');
    sse.close();
    return;
  }
  finished = true;
  const out = open();
  if (!streamed && result.response) out.send(undefined, chunk({ content: result.response }));
  out.send(undefined, chunk({}, 'stop'));
  out.send(undefined, { ...meta, object: 'chat.completion.chunk', choices: [], usage: usage(result) });
  out.send(undefined, '[DONE]');
  out.close();
}

function usage(result: TurnResult) {
  return { prompt_tokens: result.inputTokens, completion_tokens: result.outputTokens, total_tokens: result.inputTokens + result.outputTokens };
}

function seconds(iso: string): number {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
}
