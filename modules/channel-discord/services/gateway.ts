/**
 * The Gateway side: a WebSocketManager whose Gateway URL is vetted, and a one-shard strategy that keeps its shard.
 * The library opens the WebSocket itself (the `ws` package, not the net module's fetch), so the URL GET /gateway/bot
 * hands out must be Discord's (wss://*.discord.gg) or on the configured `api_url`'s host (a loopback test server).
 */
import {
  managerToFetchingStrategyOptions,
  SimpleContextFetchingStrategy,
  WebSocketManager,
  WebSocketShardStatus,
  type IShardingStrategy,
  type WebSocketShard,
  type WebSocketShardDestroyOptions,
} from '@discordjs/ws';
import type { APIGatewayBotInfo, GatewaySendPayload } from '@discordjs/core';
import { channelError } from './errors.ts';
import { StoppableShard } from './shard.ts';

/** Whether the adapter may open a WebSocket to `url`, given the configured REST root. */
export function gatewayAllowed(url: string, apiUrl: string): boolean {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return false;
  }
  if (target.protocol === 'wss:' && (target.hostname === 'discord.gg' || target.hostname.endsWith('.discord.gg'))) return true;
  return (target.protocol === 'wss:' || target.protocol === 'ws:') && target.hostname === new URL(apiUrl).hostname;
}

export class VettedGatewayManager extends WebSocketManager {
  private apiUrl = '';
  /** The last Gateway URL that passed the check. */
  vettedUrl = '';

  /** Set right after construction: the parent's constructor may not be preceded by field work. */
  vet(apiUrl: string): this {
    this.apiUrl = apiUrl;
    return this;
  }

  override async fetchGatewayInformation(force?: boolean): Promise<APIGatewayBotInfo> {
    const info = await super.fetchGatewayInformation(force);
    if (!gatewayAllowed(info.url, this.apiUrl)) throw channelError('permanent', `Discord's Gateway URL ${info.url} is not on discord.gg or the api_url's host`);
    this.vettedUrl = info.url;
    return info;
  }
}

/**
 * One shard, held for the life of the connection. The library's SimpleShardingStrategy forgets its shards on destroy,
 * and a shard that was waiting out its 500 ms before a resume then opens a socket nobody can close: this strategy
 * keeps its shard (a StoppableShard) so `close` stops it for good (`wire` sees every shard created).
 */
export class OneShardStrategy implements IShardingStrategy {
  private shard: StoppableShard | undefined;
  private closed = false;

  constructor(
    private readonly manager: WebSocketManager,
    private readonly wire: (shard: WebSocketShard) => void,
  ) {}

  async spawn(shardIds: number[]): Promise<void> {
    const options = await managerToFetchingStrategyOptions(this.manager);
    if (this.closed) throw new Error('the Discord connection was stopped');
    this.shard = new StoppableShard(new SimpleContextFetchingStrategy(this.manager, options), shardIds[0] ?? 0);
    this.wire(this.shard);
  }

  async connect(): Promise<void> {
    if (!this.closed) await this.shard?.connect();
  }

  /** The final stop (the manager's destroy also runs before every spawn): see StoppableShard.stop. */
  async close(waitMs: number): Promise<void> {
    this.closed = true;
    await this.shard?.stop(waitMs);
  }

  async destroy(options?: Omit<WebSocketShardDestroyOptions, 'recover'>): Promise<void> {
    await this.shard?.destroy(options);
  }

  async send(_shardId: number, payload: GatewaySendPayload): Promise<void> {
    await this.shard?.send(payload);
  }

  // The interface names @discordjs/collection's Collection (a Map subclass), a package this module does not import; the
  // manager never calls this itself, and a Map answers what a caller of WebSocketManager.fetchStatus reads.
  fetchStatus(): ReturnType<IShardingStrategy['fetchStatus']> {
    const status = new Map<number, WebSocketShardStatus>(this.shard ? [[this.shard.id, this.shard.status]] : []);
    return status as unknown as ReturnType<IShardingStrategy['fetchStatus']>;
  }
}
