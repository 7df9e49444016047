import { cappedLimitProperty, openSse, readLimit, tooManyRequests, type Routes } from '@talon/module-sdk';
import type { CommsConfig } from '../config.ts';
import { send, type SendDeps } from '../services/send.ts';

const tags = ['comms'];

const EVENTS_PAGE = { limit: 100, max: 500 };
const eventsQuery = { type: 'object', properties: { limit: cappedLimitProperty(EVENTS_PAGE, 'events to return, newest first') } } as const;

const sendBody = {
  type: 'object',
  properties: {
    to: { type: 'string', minLength: 1, maxLength: 300, description: 'agent:<id or name>, or peer:<node_id>/agent:<name>' },
    content: { type: 'string', minLength: 1, maxLength: 65536 },
    from: { type: 'string', minLength: 1, maxLength: 300, default: 'api', description: 'who sends: agent:<id or name>, user:<name>, ...' },
  },
  required: ['to', 'content'],
  additionalProperties: false,
} as const;

export function commsRoutes(app: Routes, deps: SendDeps & { config: () => CommsConfig }): void {
  const streams = new Set<() => void>();

  app.get('/api/comms/topology', { schema: { summary: 'Agents, parent/child and messaging edges, and the routing table', tags } }, async () => {
    const agents = deps.agents().list();
    const nodes = agents.map((a) => ({ id: a.id, name: a.name, state: a.state, model: `${a.model.provider}/${a.model.model}`, parent_id: a.parentId ?? null }));
    const edges = [
      ...agents.filter((a) => a.parentId).map((a) => ({ from: a.parentId!, to: a.id, kind: 'parent_child' as const })),
      ...deps.log.messageEdges().map((e) => ({ ...e, kind: 'message' as const })),
    ];
    const peers = deps.peers()?.peers() ?? [];
    const routes = [
      ...agents.map((a) => ({ address: `agent:${a.id}`, name: a.name, via: 'local', node_id: null })),
      ...peers
        .filter((p) => p.state === 'connected')
        .flatMap((p) => p.agents.map((a) => ({ address: `peer:${p.node_id}/agent:${a.name}`, name: a.name, via: 'peer', node_id: p.node_id }))),
    ];
    return { nodes, edges, routes };
  });

  app.get('/api/comms/events', { schema: { summary: 'Recent comms events, newest first', tags, querystring: eventsQuery } }, async (request) => {
    const limit = readLimit(request.query.limit, EVENTS_PAGE);
    return { items: deps.log.recent(limit), total: deps.log.total, offset: 0, limit };
  });

  app.get(
    '/api/comms/events/stream',
    { schema: { summary: 'SSE of live comms events (unnamed data events, keep-alive comments)', tags } },
    async (request, reply) => {
      if (streams.size >= deps.config().max_streams) throw tooManyRequests(`too many comms streams open (${streams.size})`, 5);
      const sse = openSse(request, reply, { keepAliveMs: deps.config().keep_alive_secs * 1000 });
      const off = deps.log.listen((e) => sse.send(undefined, e));
      streams.add(off);
      sse.onClose(() => {
        off();
        streams.delete(off);
      });
    },
  );

  app.post(
    '/api/comms/send',
    { schema: { summary: 'Delivers a message to an agent (here or on a peer) and answers with its reply', tags, body: sendBody } },
    async (request) => send(deps, request.body),
  );
}
