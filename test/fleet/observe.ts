/**
 * What the fleet test watches from outside the nodes: a webhook receiver (each delivery's id, body and arrival), a
 * WebSocket per node that notes when each agent first shows up in its `agents_updated` (the cross-node event fan-out),
 * and the fake provider's requests counted per work item (a turn is "run" when its prompt reached the provider).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import type { RecordedRequest } from '@talon/testing';
import { lastUserText, type FleetNode } from './nodes.ts';

export interface Delivery {
  id: string;
  body: string;
  /** performance.now() when it arrived. */
  at: number;
}

/** A local webhook receiver on 127.0.0.1 that answers 200 and records every delivery. */
export async function startReceiver(): Promise<{ url: string; received: Delivery[]; close(): void }> {
  const received: Delivery[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ id: String(req.headers['x-webhook-id']), body: Buffer.concat(chunks).toString('utf8'), at: performance.now() });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

/**
 * A WebSocket chat connection to a node, kept only for its `agents_updated` messages: `seen` holds when each agent id
 * was first listed (performance.now()). The nodes' periodic list is set far apart, so a new id arrives with the event.
 */
export class AgentsWatch {
  readonly seen = new Map<string, number>();
  private socket?: WebSocket;

  async open(node: FleetNode, agentId: string): Promise<void> {
    this.socket?.terminate();
    const socket = new WebSocket(`ws://127.0.0.1:${node.port}/api/agents/${agentId}/ws`);
    this.socket = socket;
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as { type: string; agents?: Array<{ id: string }> };
      if (message.type !== 'agents_updated') return;
      const now = performance.now();
      for (const agent of message.agents ?? []) if (!this.seen.has(agent.id)) this.seen.set(agent.id, now);
    });
    // A node killed under it closes it: nothing to do (the test reopens one on the restarted node).
    socket.on('error', () => undefined);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
  }

  close(): void {
    this.socket?.terminate();
  }
}

/** How the provider saw one work item: every request whose last user message holds its marker. */
export interface ItemRuns {
  requests: RecordedRequest[];
  /** Requests that ran to their answer. */
  completed: RecordedRequest[];
}

export function runsOf(requests: readonly RecordedRequest[], marker: string): ItemRuns {
  const mine = requests.filter((r) => lastUserText(r.body).includes(marker));
  return { requests: mine, completed: mine.filter((r) => !r.aborted && r.finishedAt !== undefined) };
}

/**
 * A provider call the killed node had under way: cut off by the kill (aborted), or answered within `graceMs` before
 * it (the node may have died before recording the answer). Running such an item again is the takeover, not a duplicate.
 */
export function inFlightAt(request: RecordedRequest, killedAt: number, graceMs = 1_000): boolean {
  if (request.startedAt! > killedAt) return false;
  return request.aborted || (request.finishedAt !== undefined && request.finishedAt > killedAt - graceMs && request.finishedAt <= killedAt + 50);
}
