/**
 * Requests about a turn that runs in another process (stop, interrupt, attach) are relayed to that process: the same
 * method, path, credentials and body, to the address its node row gives. A relayed request carries RELAYED_HEADER and
 * is served where it arrives, never relayed again. A relayed attach is streamed through, event by event, and ends
 * with an error event if the owner process is lost.
 */
import type { Logger } from 'pino';
import { openSse, type FastifyReply, type FastifyRequest, type NodeAccess } from '@talon/module-sdk';

export const RELAYED_HEADER = 'x-talon-relayed-from';
/** A relayed stop or interrupt that takes longer than this is given up (the owner is busy or gone). */
const RELAY_TIMEOUT_MS = 5000;
/** Headers that travel with a relayed request: who is asking, and what they send. */
const FORWARDED = ['authorization', 'cookie', 'x-request-id', 'content-type', 'accept'];

/** The final event of a relayed attach whose owner died. */
export const OWNER_LOST = 'the process that ran the turn was lost; the turn is recorded as interrupted';
/**
 * The final event of a relayed attach whose owner's stream ended without one: its connection broke (a process killed
 * outright closes it at once, long before it is found dead) or it closed early. Attachers always get a final event.
 */
export const OWNER_UNREACHABLE =
  'the connection to the process running the turn ended before the turn did; if that process died, the turn is recorded as interrupted once it is found dead';

export interface RelayDeps {
  nodes: NodeAccess;
  log: Logger;
}

export class Relay {
  /** Relayed attach streams by owner node: each function ends its stream with OWNER_LOST. */
  private readonly streams = new Map<string, Set<() => void>>();

  constructor(private readonly deps: RelayDeps) {}

  /** Whether another process relayed this request here. */
  static relayed(request: FastifyRequest): boolean {
    return typeof request.headers[RELAYED_HEADER] === 'string';
  }

  /** Sends the request on to a node; undefined when the node is not live (or does not answer in time). */
  async forward(request: FastifyRequest, node: string, signal = AbortSignal.timeout(RELAY_TIMEOUT_MS)): Promise<Response | undefined> {
    const address = await this.deps.nodes.address(node);
    if (!address) return undefined;
    const headers = new Headers();
    for (const name of FORWARDED) {
      const value = request.headers[name];
      if (typeof value === 'string') headers.set(name, value);
    }
    headers.set(RELAYED_HEADER, this.deps.nodes.id);
    const body = request.body === undefined || request.method === 'GET' ? undefined : JSON.stringify(request.body);
    if (body !== undefined) headers.set('content-type', 'application/json');
    try {
      return await fetch(`http://${address}${request.url}`, { method: request.method, headers, body, signal });
    } catch (err) {
      // An attach whose client left aborts on purpose; anything else (refused, timed out) is worth a line.
      if ((signal.reason as Error | undefined)?.name !== 'AbortError')
        this.deps.log.warn({ err, node, url: request.url }, 'a request could not be relayed to its owner');
      return undefined;
    }
  }

  /** Sends the request on and reads the owner's answer: its JSON body ({} when empty), undefined when it failed. */
  async answer<T = Record<string, unknown>>(request: FastifyRequest, node: string): Promise<T | undefined> {
    const res = await this.forward(request, node);
    if (!res) return undefined;
    try {
      const text = await res.text();
      if (!res.ok) return undefined;
      return (text ? JSON.parse(text) : {}) as T;
    } catch (err) {
      this.deps.log.warn({ err, node, url: request.url }, 'the owner of a turn answered a relayed request with something unreadable');
      return undefined;
    }
  }

  /**
   * Streams the owner's attach through. False (nothing sent yet) when the owner could not be reached or refused: the
   * caller then attaches here.
   */
  async attach(request: FastifyRequest, reply: FastifyReply, node: string): Promise<boolean> {
    const upstream = new AbortController();
    const res = await this.forward(request, node, upstream.signal);
    if (!res?.ok || !res.body) {
      upstream.abort();
      return false;
    }
    const sse = openSse(request, reply);
    const lost = () => {
      sse.send('error', { error: OWNER_LOST, status: 503 });
      sse.close();
    };
    let ends = this.streams.get(node);
    if (!ends) this.streams.set(node, (ends = new Set()));
    ends.add(lost);
    sse.onClose(() => {
      upstream.abort();
      ends.delete(lost);
      if (!ends.size && this.streams.get(node) === ends) this.streams.delete(node);
    });
    void this.pump(res.body, sse, upstream.signal);
    return true;
  }

  /** A node died: every stream relayed from it ends with OWNER_LOST. */
  ownerLost(node: string): void {
    for (const end of [...(this.streams.get(node) ?? [])]) end();
  }

  /** Copies the owner's events (not its keep-alives: this stream has its own) until it ends. */
  private async pump(body: ReadableStream<Uint8Array>, sse: ReturnType<typeof openSse>, signal: AbortSignal): Promise<void> {
    const decoder = new TextDecoder();
    let buffered = '';
    let ended = false;
    try {
      for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
        buffered += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffered.indexOf('\n\n')) >= 0) {
          const block = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          const event = parseEvent(block);
          if (!event) continue;
          sse.send(event.name, event.data);
          if (event.name === 'done' || event.name === 'error') ended = true;
        }
      }
    } catch (err) {
      if (!signal.aborted) this.deps.log.warn({ err }, 'a relayed attach stream broke');
    }
    // The owner closed its stream: the turn ended (its last event went through), or it broke before the final event.
    if (!ended && !signal.aborted) sse.send('error', { error: OWNER_UNREACHABLE, status: 503 });
    sse.close();
  }
}

/** One SSE block → its event name and data text; undefined for a comment. */
function parseEvent(block: string): { name: string | undefined; data: string } | undefined {
  let name: string | undefined;
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith('event: ')) name = line.slice(7);
    else if (line.startsWith('data: ')) data.push(line.slice(6));
  }
  return data.length ? { name, data: data.join('\n') } : undefined;
}
