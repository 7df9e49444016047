import { notFound, type Dialect, type NodeAccess, type NodeInfo, type Routes } from '@talon/module-sdk';
import type { Network } from '../services/network.ts';
import type { Identity } from '../services/identity.ts';
import type { Pins } from '../services/pins.ts';

const tags = ['peers'];
const idParams = { type: 'object', properties: { id: { type: 'string', minLength: 1 } }, required: ['id'] } as const;
const messageBody = {
  type: 'object',
  properties: {
    agent: { type: 'string', minLength: 1, maxLength: 128, description: 'agent name or id on the peer' },
    message: { type: 'string', minLength: 1, maxLength: 65536 },
  },
  required: ['agent', 'message'],
  additionalProperties: false,
} as const;

export interface PeerRouteDeps {
  network: () => Network | undefined;
  identity: () => Identity | undefined;
  pins: Pins;
  /** The processes of this service sharing its database (the fleet's nodes; not peers) and the database's engine. */
  nodes: Pick<NodeAccess, 'list'>;
  database: Dialect;
}

/** A node row as the API shows it: times as ISO strings. */
const nodeView = ({ bootAt, heartbeatAt, ...node }: NodeInfo) => ({
  ...node,
  boot_at: new Date(bootAt).toISOString(),
  heartbeat_at: new Date(heartbeatAt).toISOString(),
});

export function peerRoutes(app: Routes, deps: PeerRouteDeps): void {
  const peerOf = (id: string) => {
    const peer = deps
      .network()
      ?.peers()
      .find((p) => p.node_id === id);
    if (!peer) throw notFound(`peer '${id}' not found`);
    return peer;
  };

  app.get('/api/peers', { schema: { summary: 'Peers this node knows, with their state', tags } }, async () => {
    const peers = deps.network()?.peers() ?? [];
    return { peers, total: peers.length };
  });

  app.get('/api/peers/:id', { schema: { summary: 'One peer', tags, params: idParams } }, async (request) => peerOf(request.params.id));

  app.post(
    '/api/peers/:id/message',
    // A turn on the peer, priced like a message to a local agent.
    { schema: { summary: 'Sends an agent on a peer a message and returns its reply', tags, params: idParams, body: messageBody }, config: { rateCost: 30 } },
    async (request) => {
      const network = deps.network();
      if (!network) throw notFound(`peer '${request.params.id}' not found: peers are not configured`);
      return network.sendAgentMessage(request.params.id, request.body.agent, request.body.message, 'api');
    },
  );

  app.get('/api/network/status', { schema: { summary: "This node's id, its connected peers and message throughput", tags } }, async () => {
    const network = deps.network();
    const identity = deps.identity();
    const peers = network?.peers() ?? [];
    return {
      enabled: network?.enabled ?? false,
      node_id: identity?.nodeId ?? null,
      node_name: identity?.nodeName ?? null,
      listen_address: network?.listenAddress ?? null,
      protocol_version: 'talon-peer/1',
      identity_fingerprint: identity?.fingerprint ?? null,
      // Additive (the dashboard's peers view): each address of [peers] connect and the state of its link.
      connect: network?.dialing() ?? [],
      connected_peers: peers.filter((p) => p.state === 'connected').length,
      total_peers: peers.length,
      pinned_peers: deps.pins.count(),
      messages: { sent: network?.throughput.sent ?? 0, received: network?.throughput.received ?? 0, last_minute: network?.throughput.perMinute() ?? 0 },
      // Additive (issue 30): this service's own processes on its database. On PostgreSQL it runs as a fleet of nodes.
      database: deps.database,
      fleet: deps.database === 'postgres',
      nodes: (await deps.nodes.list()).map(nodeView),
    };
  });
}
