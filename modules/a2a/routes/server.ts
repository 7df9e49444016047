/**
 * This instance as an A2A agent: the cards, the JSON-RPC binding at the card
 * URLs (POST /a2a for the instance, POST /a2a/agents/{id} for one agent), and
 * the spec's task endpoints (/a2a/tasks/send, /a2a/tasks/{id}, …/cancel),
 * which run on the same SDK request handler and task store.
 */
import { randomUUID } from 'node:crypto';
import { HttpError, badRequest, conflict, notFound, type Routes } from '@talon/module-sdk';
import type { SendMessageRequest } from '@a2a-js/sdk';
import type { DefaultRequestHandler } from '@a2a-js/sdk/server';
import type { AgentRecord, AgentRegistry } from '@talon/agents';
import { agentRpcUrl, cardJson, coreCard, type CardContext } from '../services/card.ts';
import { message } from '../services/messages.ts';
import { RpcEndpoint } from '../services/rpc.ts';
import { taskView } from '../services/shapes.ts';
import type { StoreTaskStore } from '../services/task-store.ts';
import { a2aCore } from '../services/sdk.ts';

export interface ServerDeps {
  registry: () => AgentRegistry;
  handler: () => DefaultRequestHandler;
  rpc: RpcEndpoint;
  store: StoreTaskStore;
  cardContext: () => CardContext;
  instanceCard: () => ReturnType<typeof coreCard>;
  defaultAgent: () => AgentRecord | undefined;
  maxChars: () => number;
  /** [a2a] public_card: the cards answer without the bearer although api_key is set. */
  publicCard: () => boolean;
}

const tags = ['a2a'];
const idParams = { type: 'object', properties: { id: { type: 'string', minLength: 1, maxLength: 200 } }, required: ['id'] } as const;
const rpcBody = { type: ['object', 'array'], description: 'a JSON-RPC 2.0 request of the A2A binding' } as const;

const messageSchema = {
  anyOf: [
    { type: 'string' },
    {
      type: 'object',
      properties: {
        role: { type: 'string' },
        parts: {
          type: 'array',
          items: { type: 'object', properties: { text: { type: 'string' }, type: { type: 'string' }, kind: { type: 'string' } } },
          maxItems: 100,
        },
      },
      required: ['parts'],
    },
  ],
} as const;

const sendBody = {
  type: 'object',
  properties: {
    agent_id: { type: 'string', minLength: 1, description: 'the agent (id or name)' },
    agentId: { type: 'string', minLength: 1 },
    message: messageSchema,
    blocking: { type: 'boolean', default: true, description: 'false: answer at once with the submitted task (GET /a2a/tasks/{id} follows it)' },
    params: {
      type: 'object',
      properties: { agent_id: { type: 'string' }, agentId: { type: 'string' }, message: messageSchema },
      description: "the reference system's params-wrapped form",
    },
  },
} as const;

type MessageInput = string | { parts: Array<{ text?: string }> } | undefined;

export function messageText(input: MessageInput, maxChars: number): string {
  const text =
    typeof input === 'string'
      ? input
      : (input?.parts ?? [])
          .map((p) => p.text ?? '')
          .filter(Boolean)
          .join('\n');
  if (!text.trim()) throw badRequest('message has no text: send {message: {role: "user", parts: [{text: "..."}]}}');
  if (text.length > maxChars) throw badRequest(`message is longer than ${maxChars} characters`);
  return text;
}

const SEND_METHODS = new Set(['message/send', 'message/stream', 'SendMessage', 'SendStreamingMessage']);

/** The agent a JSON-RPC send on the instance URL addresses: metadata.agent_id of the message, else the default agent. */
function rpcAgent(body: unknown, deps: ServerDeps): string | undefined {
  const params = (body as { params?: { message?: { metadata?: Record<string, unknown> } } } | undefined)?.params;
  const named = params?.message?.metadata?.agent_id ?? params?.message?.metadata?.agentId;
  if (typeof named === 'string') return (deps.registry().get(named.toLowerCase()) ?? deps.registry().findByName(named))?.id ?? named;
  return deps.defaultAgent()?.id;
}

export function serverRoutes(app: Routes, deps: ServerDeps): void {
  const agent = (idOrName: string) => {
    const found = deps.registry().get(idOrName.toLowerCase()) ?? deps.registry().findByName(idOrName);
    if (!found) throw notFound(`Agent '${idOrName}' not found`);
    return found;
  };
  const agentCard = (a: AgentRecord) => {
    const c = deps.cardContext();
    return cardJson(coreCard(c, agentRpcUrl(c, a.id), a.name, a.description || `The agent ${a.name}`, [a]), c.keyRequired, a.id);
  };

  // With api_key set the cards name the agents, so they need the bearer like every route, unless the operator
  // publishes them ([a2a] public_card, read per request).
  const card = { config: { publicWhen: deps.publicCard } };
  const description = 'Needs the bearer when api_key is set, unless [a2a] public_card = true';
  const instance = async () => cardJson(deps.instanceCard(), deps.cardContext().keyRequired);
  for (const url of ['/.well-known/agent.json', '/.well-known/agent-card.json']) {
    app.get(url, { ...card, schema: { summary: 'The A2A agent card of this instance (every agent is a skill)', description, tags } }, instance);
  }
  for (const url of ['/a2a/agents/:id/.well-known/agent.json', '/a2a/agents/:id/.well-known/agent-card.json']) {
    app.get(url, { ...card, schema: { summary: 'The A2A agent card of one agent', description, tags, params: idParams } }, async (request) =>
      agentCard(agent(request.params.id)),
    );
  }

  app.get('/a2a/agents', { schema: { summary: 'Local agents as A2A agent cards (with their agent id)', tags } }, async () => {
    const agents = deps.registry().list().map(agentCard);
    return { agents, total: agents.length };
  });

  app.post('/a2a', { schema: { summary: 'A2A JSON-RPC binding of the instance (0.3 and 1.0 methods)', tags, body: rpcBody } }, async (request, reply) => {
    const method = (request.body as { method?: string }).method ?? '';
    const agentId = SEND_METHODS.has(method) ? rpcAgent(request.body, deps) : undefined;
    if (SEND_METHODS.has(method) && !agentId) {
      const id = (request.body as { id?: unknown }).id ?? null;
      return reply.send({
        jsonrpc: '2.0',
        id,
        error: { code: -32602, message: 'name the agent: message.metadata.agent_id, the per-agent URL of GET /a2a/agents, or [a2a] default_agent' },
      });
    }
    return deps.rpc.serve(request, reply, agentId);
  });

  app.post('/a2a/agents/:id', { schema: { summary: 'A2A JSON-RPC binding of one agent', tags, params: idParams, body: rpcBody } }, async (request, reply) =>
    deps.rpc.serve(request, reply, agent(request.params.id).id),
  );

  taskRoutes(app, deps, agent);
}

function taskRoutes(app: Routes, deps: ServerDeps, agent: (idOrName: string) => AgentRecord): void {
  app.post('/a2a/tasks/send', { schema: { summary: 'Send a message to a local agent as an A2A task', tags, body: sendBody } }, async (request) => {
    const { body } = request;
    const target = body.agent_id ?? body.agentId ?? body.params?.agent_id ?? body.params?.agentId;
    if (!target) throw badRequest("missing required field 'agent_id'");
    const a = agent(target);
    const text = messageText((body.message ?? body.params?.message) as MessageInput, deps.maxChars());
    const params: SendMessageRequest = {
      tenant: '',
      message: { ...message(a2aCore().Role.ROLE_USER, text), contextId: randomUUID() },
      configuration: { acceptedOutputModes: ['text/plain'], taskPushNotificationConfig: undefined, returnImmediately: body.blocking === false },
      metadata: undefined,
    };
    const result = await deps.handler().sendMessage(params, RpcEndpoint.context(a.id)).catch(sdkError);
    if (!('status' in result)) throw new HttpError(502, 'the agent answered without a task');
    return taskView(result);
  });

  app.get('/a2a/tasks/:id', { schema: { summary: 'A task of a local agent: status and result', tags, params: idParams } }, async (request) =>
    taskView(await load(deps, request.params.id)),
  );

  app.post('/a2a/tasks/:id/cancel', { schema: { summary: 'Cancel a running task', tags, params: idParams } }, async (request) => {
    const task = await load(deps, request.params.id);
    const done = await deps.handler().cancelTask({ tenant: '', id: task.id, metadata: undefined }, RpcEndpoint.context()).catch(sdkError);
    return taskView(done);
  });
}

async function load(deps: ServerDeps, id: string) {
  const task = await deps.store.load(id);
  if (!task) throw notFound(`Task '${id}' not found`);
  return task;
}

/** SDK errors (copies of their classes live in each SDK bundle, so by name) as HTTP errors. */
function sdkError(err: Error): never {
  if (err.name === 'TaskNotFoundError') throw notFound(err.message);
  if (err.name === 'TaskNotCancelableError') throw conflict(`${err.message}: the task has already finished`);
  if (err.name === 'RequestMalformedError' || err.name === 'ContentTypeNotSupportedError') throw badRequest(err.message);
  throw err;
}
