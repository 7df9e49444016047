import { badRequest, HttpError, isUuid, notFound, type Routes } from '@talon/module-sdk';
import type { AgentRegistry } from '@talon/agents';
import { ChatConnection, type ConnectionDeps } from '../services/connection.ts';

const paramsSchema = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } as const;

export function wsRoutes(app: Routes, deps: Omit<ConnectionDeps, 'log'> & { registry(): AgentRegistry }, sockets: Set<ChatConnection>): void {
  app.get(
    '/api/agents/:id/ws',
    {
      websocket: true,
      schema: { summary: 'WebSocket chat with an agent', params: paramsSchema },
      // Runs before the upgrade: a refusal is a plain HTTP answer the client sees as the handshake status.
      preValidation: async (request) => {
        const { id } = request.params;
        if (!isUuid(id)) throw badRequest(`invalid agent id: '${id}' is not a UUID`);
        if (!deps.registry().get(id)) throw notFound(`agent '${id}' not found`);
        // A plain GET would otherwise get the websocket plugin's empty 404.
        if (!request.ws)
          throw new HttpError(426, 'this endpoint is a WebSocket: connect with an Upgrade: websocket request', { headers: { upgrade: 'websocket' } });
      },
    },
    (socket, request) => {
      const connection = new ChatConnection(socket, request.params.id, { ...deps, log: request.log });
      sockets.add(connection);
      socket.on('close', () => sockets.delete(connection));
    },
  );
}
