/**
 * The A2A JSON-RPC binding on Fastify, through the SDK's framework-neutral
 * transport handlers: A2A 1.0 (SendMessage, GetTask...) for requests with
 * `A2A-Version: 1.0`, and A2A 0.3 (message/send, message/stream, tasks/get,
 * tasks/cancel) for requests with `A2A-Version: 0.3` or none, as the SDK's
 * own Express adapter decides. Streaming methods answer Server-Sent Events.
 */
import type { DefaultRequestHandler, JsonRpcTransportHandler, ServerCallContext } from '@a2a-js/sdk/server';
import type { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import { openSse, type FastifyReply, type FastifyRequest } from '@talon/module-sdk';
import { AGENT_KEY } from './executor.ts';
import { a2aLegacyServer, a2aServer } from './sdk.ts';

type RpcAnswer = { jsonrpc: string; id: string | number | null; result?: unknown; error?: unknown };

export class RpcEndpoint {
  private transports?: { v1: JsonRpcTransportHandler; legacy: LegacyJsonRpcTransportHandler };

  /** `handler` makes the SDK's request handler on first use (the SDK is loaded then). */
  constructor(private readonly handler: () => DefaultRequestHandler) {}

  /** A server context for calls made by this module's own routes (the spec's task endpoints). */
  static context(agentId?: string): ServerCallContext {
    return callContext(agentId, '1.0');
  }

  private transport(legacy: boolean): JsonRpcTransportHandler | LegacyJsonRpcTransportHandler {
    this.transports ??= {
      v1: new (a2aServer().JsonRpcTransportHandler)(this.handler()),
      legacy: new (a2aLegacyServer().LegacyJsonRpcTransportHandler)(this.handler()),
    };
    return legacy ? this.transports.legacy : this.transports.v1;
  }

  async serve(request: FastifyRequest, reply: FastifyReply, agentId: string | undefined): Promise<unknown> {
    const header = request.headers['a2a-version'];
    const requested = (Array.isArray(header) ? header[0] : header) || undefined;
    const legacy = (requested ?? '0.3') === '0.3';
    const mapError = legacy ? a2aLegacyServer().LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError : a2aServer().JsonRpcTransportHandler.mapToJSONRPCError;
    const body = request.body as { id?: string | number } | undefined;
    const id = body && typeof body === 'object' && !Array.isArray(body) ? (body.id ?? null) : null;
    const context = callContext(agentId, requested);
    let answer: RpcAnswer | AsyncGenerator<RpcAnswer, void, undefined>;
    try {
      a2aServer().validateVersion(context.requestedVersion, await this.handler().getAgentCard(), 'JSONRPC');
      answer = await this.transport(legacy).handle(request.body as Record<string, unknown>, context);
    } catch (err) {
      // Bad input of every kind is a JSON-RPC error in a 200, as the SDK's adapters answer.
      return reply.send({ jsonrpc: '2.0', id, error: mapError(err) });
    }
    if (!(Symbol.asyncIterator in answer)) return reply.send(answer);
    return this.stream(request, reply, answer, id, mapError);
  }

  private async stream(
    request: FastifyRequest,
    reply: FastifyReply,
    events: AsyncGenerator<RpcAnswer>,
    id: string | number | null,
    mapError: (err: unknown) => unknown,
  ) {
    const sse = openSse(request, reply);
    sse.onClose(() => void events.return(undefined));
    try {
      for await (const event of events) {
        if (sse.closed) break;
        sse.send(undefined, event);
      }
    } catch (err) {
      sse.send('error', { jsonrpc: '2.0', id, error: mapError(err) });
    } finally {
      sse.close();
    }
    return reply;
  }
}

/** A context carrying the addressed agent; an undefined version lets the SDK apply its own default. */
function callContext(agentId: string | undefined, requestedVersion: string | undefined): ServerCallContext {
  const { ServerCallContext, UnauthenticatedUser } = a2aServer();
  return new ServerCallContext({ user: new UnauthenticatedUser(), requestedVersion, state: new Map([[AGENT_KEY, agentId]]) });
}
