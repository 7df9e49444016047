/**
 * The running adapters of this process: one per loaded adapter that is configured and enabled. Each gets its own
 * AdapterContext (emit into the journal, state reports, the net fetch with its configured origins, a stop signal).
 */
import type { Logger } from 'pino';
import type { NetFetch } from '@talon/net';
import type { AdapterContext, ChannelAdapter, ChannelConnection, EmitResult, InboundMessage } from '@talon/channels';
import type { ChannelSettings, SettingsStore } from './settings.ts';

export type ConnectionState = 'stopped' | 'connecting' | 'connected' | 'error';

export interface Running {
  adapter: ChannelAdapter;
  settings?: ChannelSettings;
  connection?: ChannelConnection;
  controller?: AbortController;
  state: ConnectionState;
  lastError: string | null;
  startedAt: string | null;
  lastMessageAt: string | null;
  received: number;
  sent: number;
}

export interface RuntimeDeps {
  adapters(): ChannelAdapter[];
  settings: SettingsStore;
  net(): NetFetch;
  log: Logger;
  signal: AbortSignal;
  /** Commits an inbound message to the journal (resolves after the commit). */
  emit(channel: string, message: InboundMessage): Promise<EmitResult>;
  onState(channel: string, state: ConnectionState, error?: string): void;
}

export class Runtime {
  private readonly channels = new Map<string, Running>();
  /** A channel's restarts run one after another: two at once would open two connections. */
  private readonly restarts = new Map<string, Promise<boolean>>();

  constructor(private readonly deps: RuntimeDeps) {}

  /** Every loaded adapter, running or not, by name. */
  list(): Running[] {
    this.sync();
    return [...this.channels.values()].sort((a, b) => a.adapter.name.localeCompare(b.adapter.name));
  }

  get(name: string): Running | undefined {
    this.sync();
    return this.channels.get(name);
  }

  /** Follows the adapters registered now: a new one gets an entry, one whose module stopped is stopped and dropped. */
  private sync(): void {
    const loaded = new Map(this.deps.adapters().map((a) => [a.name, a]));
    for (const [name, r] of this.channels) {
      if (loaded.get(name) === r.adapter) continue;
      void this.halt(r);
      this.channels.delete(name);
    }
    for (const [name, adapter] of loaded) {
      if (!this.channels.has(name)) this.channels.set(name, blank(adapter));
    }
  }

  /** Starts every configured, enabled adapter not running (boot, POST /api/channels/reload, a module loaded). */
  async startAll(): Promise<string[]> {
    const started: string[] = [];
    for (const r of this.list()) {
      if (r.connection) continue;
      if (await this.restart(r.adapter.name)) started.push(r.adapter.name);
    }
    return started;
  }

  /** (Re)starts one adapter from its current configuration; resolves whether it runs. Never throws. */
  restart(name: string): Promise<boolean> {
    const next = (this.restarts.get(name) ?? Promise.resolve(false)).then(() => this.restartNow(name));
    this.restarts.set(name, next);
    void next.then(() => {
      if (this.restarts.get(name) === next) this.restarts.delete(name);
    });
    return next;
  }

  private async restartNow(name: string): Promise<boolean> {
    const r = this.get(name);
    if (!r) return false;
    await this.halt(r);
    r.settings = await this.deps.settings.get(r.adapter).catch((err: unknown) => {
      this.fail(r, `configuration could not be read: ${(err as Error).message}`);
      return undefined;
    });
    if (!r.settings || !r.settings.enabled || this.deps.signal.aborted) return false;
    const controller = new AbortController();
    const signal = AbortSignal.any([controller.signal, this.deps.signal]);
    r.controller = controller;
    r.state = 'connecting';
    r.lastError = null;
    try {
      r.connection = await r.adapter.start(this.context(r, r.settings, signal));
      r.startedAt = new Date().toISOString();
      return true;
    } catch (err) {
      controller.abort();
      r.controller = undefined;
      this.fail(r, (err as Error).message);
      return false;
    }
  }

  /** Stops an adapter; its configuration stays. */
  async stop(name: string): Promise<void> {
    const r = this.channels.get(name);
    if (r) await this.halt(r);
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.channels.values()].map((r) => this.halt(r)));
  }

  /**
   * A context for a QR sign-in, which runs before the channel has a connection: its configuration so far, net's fetch,
   * and an emit that refuses (nothing is received before the sign-in ends).
   */
  async signInContext(name: string): Promise<AdapterContext> {
    const r = this.get(name);
    if (!r) throw new Error(`channel '${name}' not loaded`);
    const settings = (await this.deps.settings.get(r.adapter)) ?? { fields: {}, secrets: {} };
    const context = this.context(r, settings, this.deps.signal);
    return { ...context, emit: () => Promise.reject(new Error('the channel is signing in')), report: () => undefined };
  }

  private async halt(r: Running): Promise<void> {
    const connection = r.connection;
    r.controller?.abort();
    r.controller = undefined;
    r.connection = undefined;
    if (r.state !== 'error') r.state = 'stopped';
    if (connection) await connection.stop().catch((err: unknown) => this.deps.log.warn({ err, channel: r.adapter.name }, 'channel adapter stop failed'));
  }

  private fail(r: Running, error: string): void {
    r.state = 'error';
    r.lastError = error;
    this.deps.onState(r.adapter.name, 'error', error);
  }

  private context(r: Running, settings: Pick<ChannelSettings, 'fields' | 'secrets'>, signal: AbortSignal): AdapterContext {
    const channel = r.adapter.name;
    const allowOrigins = r.adapter.urlFields.flatMap((f) => originOf(settings.fields[f]));
    const log = this.deps.log.child({ channel });
    return {
      channel,
      config: settings.fields,
      secrets: settings.secrets,
      emit: async (message) => {
        const result = await this.deps.emit(channel, message);
        if (!result.duplicate) {
          r.received++;
          r.lastMessageAt = new Date().toISOString();
        }
        return result;
      },
      report: (state, error) => {
        if (signal.aborted) return;
        r.state = state;
        if (state === 'connected') r.lastError = null;
        if (error) r.lastError = error;
        this.deps.onState(channel, state, error);
      },
      fetch: (request) => this.deps.net().fetch({ ...request, allowOrigins, signal: request.signal ? AbortSignal.any([request.signal, signal]) : signal }),
      allowOrigins,
      log,
      signal,
    };
  }
}

const blank = (adapter: ChannelAdapter): Running => ({
  adapter,
  state: 'stopped',
  lastError: null,
  startedAt: null,
  lastMessageAt: null,
  received: 0,
  sent: 0,
});

/** The `host:port` the net module compares with (its allowOrigins form). */
function originOf(value: unknown): string[] {
  if (typeof value !== 'string' || !value) return [];
  try {
    const url = new URL(value);
    return [url.port ? url.host : `${url.hostname}:${url.protocol === 'https:' ? 443 : 80}`, url.host];
  } catch {
    return [];
  }
}
