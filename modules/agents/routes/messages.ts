/**
 * Conversations: blocking message, SSE streamed message, read-only attach,
 * stop and interrupt.
 *
 * Message body: {message, session_id?, attachments?: [{file_id}], temperature?, max_tokens?}.
 */
import { conflict, openSse, requireUuid, type FastifyReply, type FastifyRequest, type Routes, type SseWriter } from '@talon/module-sdk';
import type { TurnEvent, TurnRequest, TurnResult } from '@talon/agents';
import type { AgentServices } from '../services/context.ts';
import { agentParam, idParams, sessionParams } from './common.ts';
import { ownSession } from './sessions.ts';
import { Relay } from '../services/relay.ts';

const messageBody = {
  type: 'object',
  properties: {
    message: { type: 'string' },
    session_id: { type: 'string', description: 'a session of this agent; the current one when absent' },
    attachments: {
      type: 'array',
      maxItems: 20,
      items: {
        type: 'object',
        properties: { file_id: { type: 'string' }, filename: { type: 'string' }, content_type: { type: 'string' } },
        required: ['file_id'],
      },
      description: 'uploaded files (POST /api/agents/{id}/upload) by file_id',
    },
    temperature: { type: 'number', minimum: 0, maximum: 2 },
    max_tokens: { type: 'integer', minimum: 1 },
  },
  required: ['message'],
} as const;

interface MessageBody {
  message: string;
  session_id?: string;
  attachments?: Array<{ file_id: string }>;
  temperature?: number;
  max_tokens?: number;
}

export function messageRoutes(app: Routes, s: AgentServices): void {
  /** Validates ids before anything starts, so these failures are plain HTTP errors. */
  const turnRequest = (id: string, body: MessageBody, origin: string): TurnRequest => {
    const agent = agentParam(s, id);
    if (agent.state === 'Stopped') throw conflict(`agent '${agent.name}' is stopped; start it first (POST /api/agents/bulk/start)`);
    if (body.session_id !== undefined) requireUuid(body.session_id, 'session id');
    const request: TurnRequest = { agentId: agent.id, message: body.message, origin };
    if (body.session_id !== undefined) request.sessionId = body.session_id;
    if (body.attachments?.length) request.attachments = body.attachments.map((a) => ({ file_id: a.file_id }));
    if (body.temperature !== undefined) request.temperature = body.temperature;
    if (body.max_tokens !== undefined) request.maxTokens = body.max_tokens;
    return request;
  };

  app.post(
    '/api/agents/:id/message',
    { schema: { summary: 'Send a message and wait for the reply', params: idParams, body: messageBody }, config: { rateCost: 30 } },
    async (request) => replyView(await s.runner.run(turnRequest(request.params.id, request.body, 'http'))),
  );

  app.post(
    '/api/agents/:id/message/stream',
    { schema: { summary: 'Send a message; the reply streams as Server-Sent Events', params: idParams, body: messageBody }, config: { rateCost: 30 } },
    async (request, reply) => {
      const turn = turnRequest(request.params.id, request.body, 'http-stream');
      let sse: SseWriter | undefined;
      try {
        await s.runner.run(turn, (event) => {
          if (event.type === 'started') sse = openSse(request, reply);
          else if (sse) sendEvent(sse, event);
        });
      } catch (err) {
        // Before the stream opened the error is an ordinary reply; afterwards the error event already went out.
        if (!sse) throw err;
      }
      sse?.close();
    },
  );

  app.get(
    '/api/agents/:id/attach',
    { schema: { summary: 'Observe the running (or next) turn as Server-Sent Events', params: idParams } },
    async (request, reply) => {
      const agent = agentParam(s, request.params.id);
      if (await attachElsewhere(s, request, reply, agent.id)) return;
      attach(s, agent.id, request, reply);
    },
  );

  // The reference's per-session attach, kept as an alias: it follows only turns of that session.
  app.get(
    '/api/agents/:id/sessions/:session_id/stream',
    { schema: { summary: 'Observe the running (or next) turn of one session as Server-Sent Events', params: sessionParams } },
    async (request, reply) => {
      const agent = agentParam(s, request.params.id);
      const sessionId = await ownSession(s, agent, request.params.session_id);
      if (await attachElsewhere(s, request, reply, agent.id, sessionId)) return;
      attach(s, agent.id, request, reply, sessionId);
    },
  );

  app.post(
    '/api/agents/:id/stop',
    { schema: { summary: 'Abort the running turns of the agent and of the subagents they started', params: idParams } },
    async (request) => {
      const agent = agentParam(s, request.params.id);
      const here = s.runner.stop(agent.id);
      const elsewhere = !Relay.relayed(request) && (await stopElsewhere(s, request, agent.id));
      return { status: 'stopped', message: here || elsewhere ? 'Run cancelled' : 'No active run' };
    },
  );

  app.post(
    '/api/agents/:id/sessions/:session_id/interrupt',
    { schema: { summary: 'Ask the turn of a session to end at its next tool-call boundary', params: sessionParams } },
    async (request, reply) => {
      const agentId = requireUuid(request.params.id, 'agent id');
      const sessionId = requireUuid(request.params.session_id, 'session id');
      // 204 whatever the state; a flag for a session this agent does not have would never be read.
      if (!(await s.sessions.exists(agentId, sessionId))) return reply.code(204).send();
      // A turn of the session running in another process is interrupted there.
      const owner = Relay.relayed(request) ? undefined : await s.leases.ofSession(sessionId);
      const relayed = owner && owner.node !== s.ctx.nodes.id && (await s.relay.answer(request, owner.node)) !== undefined;
      if (!relayed) s.runner.interrupt(agentId, sessionId);
      return reply.code(204).send();
    },
  );
}

export function replyView(result: TurnResult) {
  return {
    response: result.response,
    input_tokens: result.inputTokens,
    output_tokens: result.outputTokens,
    iterations: result.iterations,
    cost_usd: result.costUsd,
    session_id: result.sessionId,
    turn_id: result.turnId,
    ...(result.interrupted && { interrupted: true }),
    ...(result.ownerNotice !== undefined && { owner_notice: result.ownerNotice }),
    ...(result.files?.length && { files: result.files }),
  };
}

/** TurnEvent → the SSE event of the spec's table. Returns true for the turn's last event. */
function sendEvent(sse: SseWriter, event: TurnEvent): boolean {
  switch (event.type) {
    case 'text_delta':
      sse.send('chunk', { content: event.content, done: false });
      return false;
    case 'tool_use':
      sse.send('tool_use', { tool: event.tool });
      return false;
    case 'tool_result':
      sse.send('tool_result', { tool: event.tool, input: event.input });
      return false;
    // Additive events (docs/agents.md): a call held for a human decision, and the outcome a resumed turn starts with.
    case 'approval_pending':
      sse.send('approval_pending', { tool: event.tool, input: event.input, tool_use_id: event.id, approval_id: event.approvalId, expires_at: event.expiresAt });
      return false;
    case 'approval_result': {
      const o = event.outcome;
      sse.send('approval_result', {
        tool: o.tool,
        tool_use_id: o.callId,
        approval_id: o.approvalId,
        status: o.status,
        content: o.content,
        is_error: o.isError,
      });
      return false;
    }
    case 'owner_notice':
      sse.send('owner_notice', { text: event.text });
      return false;
    case 'done':
      sse.send('done', {
        done: true,
        usage: { input_tokens: event.result.inputTokens, output_tokens: event.result.outputTokens },
        iterations: event.result.iterations,
        session_id: event.result.sessionId,
        ...(event.result.files?.length && { files: event.result.files }),
      });
      return true;
    case 'error':
      sse.send('error', { error: event.message, status: event.status });
      return true;
    default:
      return false;
  }
}

/**
 * Stops the agent's turns in the other processes: those running one of its sessions and those waiting for one.
 * True when one of them stopped a turn.
 */
async function stopElsewhere(s: AgentServices, request: FastifyRequest, agentId: string): Promise<boolean> {
  const nodes = new Set([...(await s.leases.ofAgent(agentId)).map((o) => o.node), ...(await s.leases.waitingNodes(agentId))]);
  nodes.delete(s.ctx.nodes.id);
  const answers = await Promise.all(
    [...nodes].map(async (node) => {
      const answer = await s.relay.answer<{ message?: string }>(request, node);
      return answer?.message === 'Run cancelled';
    }),
  );
  return answers.includes(true);
}

/** An attach while no turn of the agent (or session) runs here but one runs in another process: relayed there. */
async function attachElsewhere(s: AgentServices, request: FastifyRequest, reply: FastifyReply, agentId: string, sessionId?: string): Promise<boolean> {
  if (Relay.relayed(request)) return false;
  if (s.runner.activeTurns(agentId).some((t) => sessionId === undefined || t.sessionId === sessionId)) return false;
  const owners = sessionId === undefined ? await s.leases.ofAgent(agentId) : [await s.leases.ofSession(sessionId)];
  const remote = owners.find((o) => o !== undefined && o.node !== s.ctx.nodes.id);
  return remote ? s.relay.attach(request, reply, remote.node) : false;
}

/** Follows the running turn (or waits for the next one), of one session when given, and closes when it ends. */
function attach(s: AgentServices, agentId: string, request: FastifyRequest, reply: FastifyReply, sessionId?: string): void {
  const sse = openSse(request, reply);
  const mine = (turn: { sessionId: string }) => sessionId === undefined || turn.sessionId === sessionId;
  let following = s.runner.activeTurns(agentId).find(mine)?.turnId;
  const unsubscribe = s.runner.subscribe(agentId, (event, turn) => {
    if (!following && event.type === 'started' && mine(turn)) following = turn.turnId;
    if (turn.turnId !== following || event.type === 'started') return;
    if (sendEvent(sse, event)) sse.close();
  });
  sse.onClose(unsubscribe);
  // The agent may be killed while a client waits: nothing would ever end the stream.
  const watchdog = setInterval(() => {
    if (!s.registry.get(agentId)) sse.close();
  }, 5000);
  watchdog.unref();
  sse.onClose(() => clearInterval(watchdog));
}
