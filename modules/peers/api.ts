/**
 * Contract of the peers module (`@talon/peers`): other nodes of this service, connected over the authenticated
 * peer wire protocol (docs/peers.md). The comms module routes `peer:<node_id>/agent:<name>` addresses through it.
 */
import { serviceRef } from '@talon/module-sdk';

export interface PeerInfo {
  node_id: string;
  node_name: string;
  /** host:port of the connection. */
  address: string;
  state: 'connected' | 'connecting' | 'disconnected';
  /** The handshake passed (shared-secret HMAC and the pinned Ed25519 identity). */
  authenticated: boolean;
  last_seen: string | null;
  agents: Array<{ id: string; name: string }>;
}

export interface PeerNetwork {
  peers(): PeerInfo[];
  /** Sends an agent on a connected peer a message and resolves with its reply. Rejects with HttpError (404 unknown peer or agent, 502 peer failure, 504 timeout). */
  sendAgentMessage(nodeId: string, agent: string, message: string, sender?: string): Promise<{ response: string; agent_id: string }>;
}

export const peerNetwork = serviceRef<PeerNetwork>('peers.network');
