/**
 * The peer network of this node: a listener for peers that dial in, a dialer (with reconnects) for each address
 * of `connect`, the admitted peers by node id, and the requests peers may make: discover, agent_message, ping.
 */
import net, { type Server } from 'node:net';
import type { Logger } from 'pino';
import { HttpError, isUuid } from '@talon/module-sdk';
import type { AgentRecord, AgentRegistry, AgentRunner } from '@talon/agents';
import type { PeerInfo, PeerNetwork } from '@talon/peers';
import type { PeersConfig } from '../config.ts';
import { Connection, NonceLedger, PeerError, type ConnectionDeps } from './connection.ts';
import type { Identity } from './identity.ts';
import type { Pins } from './pins.ts';
import { Throughput } from './throughput.ts';

export interface NetworkDeps {
  identity: Identity;
  pins: Pins;
  config: () => PeersConfig;
  /** Undefined without the agents module: the node then offers no agents. */
  agents: () => AgentRegistry | undefined;
  runner: () => AgentRunner;
  log: Logger;
}

interface Peer {
  nodeId: string;
  nodeName: string;
  conn?: Connection;
  address: string;
  lastSeen: number | null;
  agents: Array<{ id: string; name: string }>;
  /** Agent messages received from it in the current minute. */
  window: { start: number; count: number };
}

const agentList = (agents: AgentRecord[]) => agents.map((a) => ({ id: a.id, name: a.name }));

export class Network implements PeerNetwork {
  readonly throughput = new Throughput();
  private readonly peersById = new Map<string, Peer>();
  private readonly dialers = new Map<string, NodeJS.Timeout | undefined>();
  /** The current connection to each address of `connect`. */
  private readonly dialed = new Map<string, Connection>();
  private readonly nonces = new NonceLedger();
  private readonly connections = new Set<Connection>();
  private server?: Server;
  private listening?: string;
  private stopping = false;

  constructor(private readonly deps: NetworkDeps) {}

  get enabled(): boolean {
    const c = this.deps.config();
    return c.shared_secret !== '' && (c.listen !== '' || c.connect.length > 0);
  }

  get listenAddress(): string | undefined {
    return this.listening;
  }

  async start(): Promise<void> {
    if (!this.enabled) return;
    const { listen, connect } = this.deps.config();
    if (listen) await this.listen(listen);
    for (const address of connect) this.dial(address);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    for (const timer of this.dialers.values()) if (timer) clearTimeout(timer);
    for (const conn of this.connections) {
      conn.notify('shutting_down', {});
      conn.close();
    }
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }

  peers(): PeerInfo[] {
    return [...this.peersById.values()].map((p) => ({
      node_id: p.nodeId,
      node_name: p.nodeName,
      address: p.address,
      state: p.conn?.ready ? 'connected' : 'disconnected',
      authenticated: true,
      last_seen: p.lastSeen === null ? null : new Date(p.lastSeen).toISOString(),
      agents: p.agents,
    }));
  }

  async sendAgentMessage(nodeId: string, agent: string, message: string, sender?: string): Promise<{ response: string; agent_id: string }> {
    const peer = this.peersById.get(nodeId);
    if (!peer?.conn?.ready) throw new HttpError(404, `peer '${nodeId}' is not connected`);
    try {
      const result = (await peer.conn.request('agent_message', { agent, message, sender }, this.deps.config().request_timeout_secs * 1000)) as {
        response: string;
        agent_id: string;
      };
      return { response: String(result.response), agent_id: String(result.agent_id) };
    } catch (err) {
      const e = err as PeerError;
      if (e.code === 'not_found') throw new HttpError(404, e.message);
      if (e.code === 'rate_limited') throw new HttpError(429, e.message, { headers: { 'retry-after': '60' } });
      throw new HttpError(e.code === 'timeout' ? 504 : 502, `peer '${nodeId}': ${e.message}`);
    }
  }

  /** Tells every peer about a change of this node's agents. */
  broadcast(method: string, params: Record<string, unknown>): void {
    for (const peer of this.peersById.values()) peer.conn?.notify(method, params);
  }

  private connectionDeps(): ConnectionDeps {
    return {
      identity: this.deps.identity,
      secret: () => this.deps.config().shared_secret,
      pins: this.deps.pins,
      nonces: this.nonces,
      log: this.deps.log,
      onRequest: (conn, method, params) => this.onRequest(conn, method, params),
      onNotification: (conn, method, params) => this.onNotification(conn, method, params),
      onReady: (conn) => this.onReady(conn),
      onClose: (conn) => this.onClose(conn),
      onTraffic: (direction) => this.throughput.count(direction),
    };
  }

  private listen(address: string): Promise<void> {
    const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(address)!;
    this.server = net.createServer((socket) => {
      if (this.stopping) return socket.destroy();
      this.track(new Connection(socket, 'responder', this.connectionDeps()));
    });
    return new Promise((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(Number(m[2]), m[1], () => {
        const a = this.server!.address() as net.AddressInfo;
        this.listening = `${a.address}:${a.port}`;
        resolve();
      });
    });
  }

  /** The addresses of `connect` with the state of their link and the node that answered there. */
  dialing(): Array<{ address: string; state: 'connected' | 'connecting'; node_id: string | null }> {
    return [...this.dialers.keys()].map((address) => {
      const conn = this.dialed.get(address);
      return { address, state: conn?.ready ? 'connected' : 'connecting', node_id: (conn?.ready && conn.peer?.node_id) || null };
    });
  }

  /**
   * `[peers] connect` changed at run time (POST /api/config/set, a reload): dials the new addresses; stops dialling
   * the removed ones, closes their links and forgets the peers that answered there.
   */
  reconcile(): void {
    if (this.stopping || !this.deps.config().shared_secret) return;
    const wanted = new Set(this.deps.config().connect);
    for (const address of wanted) if (!this.dialers.has(address)) this.dial(address);
    for (const [address, timer] of [...this.dialers]) {
      if (wanted.has(address)) continue;
      if (timer) clearTimeout(timer);
      this.dialers.delete(address);
      const conn = this.dialed.get(address);
      this.dialed.delete(address);
      if (!conn) continue;
      const peer = conn.peer && this.peersById.get(conn.peer.node_id);
      if (peer?.conn === conn) this.peersById.delete(peer.nodeId);
      conn.close();
      this.deps.log.info({ address }, 'peer address removed from connect: no longer dialled');
    }
  }

  private dial(address: string): void {
    if (this.stopping) return;
    const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(address)!;
    const socket = net.connect(Number(m[2]), m[1]);
    this.dialers.set(address, undefined);
    this.dialed.set(address, this.track(new Connection(socket, 'initiator', this.connectionDeps(), address)));
    socket.on('close', () => {
      // Stopping, or the address was taken out of connect: no redial.
      if (this.stopping || !this.dialers.has(address)) return;
      this.dialers.set(
        address,
        setTimeout(() => this.dial(address), this.deps.config().reconnect_ms),
      );
    });
  }

  private track(conn: Connection): Connection {
    this.connections.add(conn);
    return conn;
  }

  private onReady(conn: Connection): boolean {
    const hello = conn.peer!;
    const existing = this.peersById.get(hello.node_id);
    if (existing?.conn?.ready) {
      this.deps.log.info({ node: hello.node_id }, 'peer already connected: keeping the first connection');
      return false;
    }
    const connected = [...this.peersById.values()].filter((p) => p.conn?.ready).length;
    if (connected >= this.deps.config().max_peers) {
      this.deps.log.warn({ node: hello.node_id }, 'peer refused: max_peers reached');
      return false;
    }
    const peer: Peer = existing ?? {
      nodeId: hello.node_id,
      nodeName: hello.node_name,
      address: conn.address,
      lastSeen: null,
      agents: [],
      window: { start: 0, count: 0 },
    };
    Object.assign(peer, { conn, nodeName: hello.node_name, address: conn.address, lastSeen: Date.now() });
    this.peersById.set(hello.node_id, peer);
    this.deps.log.info({ node: hello.node_id, name: hello.node_name, address: conn.address }, 'peer connected');
    conn.notify('agents', { agents: agentList(this.deps.agents()?.list() ?? []) });
    return true;
  }

  private onClose(conn: Connection): void {
    this.connections.delete(conn);
    const peer = conn.peer && this.peersById.get(conn.peer.node_id);
    if (peer?.conn === conn) {
      peer.conn = undefined;
      this.deps.log.info({ node: peer.nodeId }, 'peer disconnected');
    }
  }

  private touch(conn: Connection): Peer | undefined {
    const peer = conn.peer && this.peersById.get(conn.peer.node_id);
    if (peer) peer.lastSeen = Date.now();
    return peer;
  }

  private onNotification(conn: Connection, method: string, params: Record<string, unknown>): void {
    const peer = this.touch(conn);
    if (!peer) return;
    if (method === 'agents' && Array.isArray(params.agents)) {
      peer.agents = (params.agents as Array<{ id: unknown; name: unknown }>)
        .filter((a) => typeof a?.name === 'string')
        .map((a) => ({ id: String(a.id), name: String(a.name) }));
    } else if (method === 'agent_spawned' || method === 'agent_terminated') {
      void conn
        .request('discover', {}, 10_000)
        .then((r) => (peer.agents = ((r as { agents: Array<{ id: string; name: string }> }).agents ?? []).slice(0, 10_000)))
        .catch(() => undefined);
    }
  }

  private async onRequest(conn: Connection, method: string, params: Record<string, unknown>): Promise<unknown> {
    const peer = this.touch(conn);
    if (method === 'ping') return { pong: true };
    if (method === 'discover') return { agents: agentList(this.deps.agents()?.list() ?? []) };
    if (method !== 'agent_message') throw new PeerError('unknown_method', `unknown method '${method}'`);
    if (peer && !this.withinRate(peer)) throw new PeerError('rate_limited', `more than ${this.deps.config().messages_per_minute} agent messages per minute`);
    const ref = String(params.agent ?? '');
    const registry = this.deps.agents();
    const agent = !registry ? undefined : isUuid(ref) ? registry.get(ref.toLowerCase()) : registry.findByName(ref);
    if (!agent) throw new PeerError('not_found', `agent '${ref}' not found on ${this.deps.identity.nodeName}`);
    const sender = typeof params.sender === 'string' ? params.sender.slice(0, 200) : conn.peer!.node_name;
    const message = `[message from ${sender} on peer ${conn.peer!.node_name}]\n${String(params.message ?? '')}`;
    const result = await this.deps.runner().run({ agentId: agent.id, message, origin: 'peer' });
    return { response: result.response, agent_id: agent.id };
  }

  private withinRate(peer: Peer): boolean {
    const now = Date.now();
    if (now - peer.window.start >= 60_000) peer.window = { start: now, count: 0 };
    return ++peer.window.count <= this.deps.config().messages_per_minute;
  }
}
