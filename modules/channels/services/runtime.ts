/**
 * The running adapters of this process: one per loaded adapter that is configured and enabled and whose lease this
 * process holds (services/lease.ts: one process runs a channel). Each gets its own AdapterContext (emit into the
 * journal, state reports, the net fetch with its configured origins, a stop signal). A channel another process runs is
 * on `standby` here, naming its holder; a configuration changed here is noted to the other processes, so the holder
 * restarts with it.
 */
import type { Logger } from 'pino';
import type { ChangeFeed } from '@talon/module-sdk';
import type { NetFetch } from '@talon/net';
import type { AdapterContext, ChannelAdapter, ChannelConnection, EmitResult, InboundMessage } from '@talon/channels';
import { backoffDelay, RECONNECT_CAP_MS } from '../kit/backoff.ts';
import { asChannelError } from './channel-error.ts';
import type { ChannelLeases } from './lease.ts';
import type { ChannelSettings, SettingsStore } from './settings.ts';

/** `standby`: configured and enabled, but another process holds the lease and runs the adapter (`holder`). */
export type ConnectionState = 'stopped' | 'connecting' | 'connected' | 'error' | 'standby';

/** The change-feed topic of a channel's configuration (key: the channel): the holder restarts with the new one. */
const CONFIG_TOPIC = 'config';

export interface Running {
  adapter: ChannelAdapter;
  settings?: ChannelSettings;
  connection?: ChannelConnection;
  controller?: AbortController;
  state: ConnectionState;
  /** This process holds the channel's lease (its adapter may run here). */
  held: boolean;
  /** The node holding the lease as last seen (this one when held), null when none. */
  holder: string | null;
  lastError: string | null;
  startedAt: string | null;
  lastMessageAt: string | null;
  received: number;
  sent: number;
  /** The adapter's start failed: it waits for its retry (transient) or for the owner (auth, permanent), not for a tick. */
  startFailed: boolean;
  /** Failed starts since the last start, the backoff's attempt. */
  failedStarts: number;
  /** The pending retry of a failed start. */
  retry?: ReturnType<typeof setTimeout>;
}

export interface RuntimeDeps {
  adapters(): ChannelAdapter[];
  settings: SettingsStore;
  leases: ChannelLeases;
  changes: ChangeFeed;
  net(): NetFetch;
  log: Logger;
  signal: AbortSignal;
  /** Commits an inbound message to the journal (resolves after the commit). */
  emit(channel: string, message: InboundMessage): Promise<EmitResult>;
  onState(channel: string, state: ConnectionState, error?: string): void;
  /** The channel's adapter stopped here: for a restart (`restarting`), or for good (stop, disable, unload, module stop). */
  onHalt?(channel: string, restarting: boolean): void;
  /** The backoff of a failed start's retries (the kit's full jitter): first wait up to baseMs, doubling up to capMs. */
  startBackoff?: { baseMs: number; capMs: number };
}

export class Runtime {
  private readonly channels = new Map<string, Running>();
  /** A channel's restarts run one after another: two at once would open two connections. */
  private readonly restarts = new Map<string, Promise<boolean>>();

  constructor(private readonly deps: RuntimeDeps) {
    // Another process changed a channel's configuration (configure, enable, disable, reload): restart it here from
    // the stored one. Only the holder's adapter starts; a standby process just tries the lease again. '' (notes may
    // have been missed): each channel whose stored configuration is not the one it was started with.
    deps.changes.on(CONFIG_TOPIC, (name) => (name ? this.restart(name) : this.restartChanged()));
  }

  /** Restarts the channels whose stored configuration differs from the one they last read. */
  private async restartChanged(): Promise<void> {
    for (const r of this.list()) {
      const stored = await this.deps.settings.get(r.adapter).catch(() => undefined);
      if (JSON.stringify(stored) !== JSON.stringify(r.settings)) await this.restart(r.adapter.name);
    }
  }

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
      // In the channel's order: the new copy starts after the old connection closed, and the old copy's release of
      // the lease comes before the new copy takes it (after, it would drop the new copy's lease).
      void this.serial(name, async () => (await this.halt(r, false), await this.letGo(r), false));
      this.channels.delete(name);
    }
    for (const [name, adapter] of loaded) {
      if (!this.channels.has(name)) this.channels.set(name, blank(adapter));
    }
  }

  /**
   * Starts every configured, enabled adapter not running and not tried yet (boot, a module loaded). One whose start
   * failed waits for its retry (transient) or its owner (a new configuration, POST /api/channels/reload), not for
   * whichever module loads next.
   */
  async startAll(): Promise<string[]> {
    const started: string[] = [];
    for (const r of this.list()) {
      const name = r.adapter.name;
      // Checked in the channel's turn: at boot each module loaded calls this while the first start is still under
      // way, and each would otherwise stop that start's connection to open another.
      const untried = () => {
        const current = this.channels.get(name);
        return !current?.connection && !current?.startFailed;
      };
      if (await this.serial(name, async () => (untried() ? this.restartNow(name) : false))) started.push(name);
    }
    return started;
  }

  /**
   * The configuration of a channel changed here: restarts it and tells the other processes, so that whichever holds
   * its lease restarts with the new configuration (a standby process never opens a second connection).
   */
  async apply(name: string): Promise<boolean> {
    const running = await this.restart(name);
    await this.deps.changes.note(CONFIG_TOPIC, name);
    return running;
  }

  /** (Re)starts every loaded channel here and in the other processes (POST /api/channels/reload); names those running here. */
  async reloadAll(): Promise<string[]> {
    const started: string[] = [];
    for (const r of this.list()) if (await this.apply(r.adapter.name)) started.push(r.adapter.name);
    return started;
  }

  /** (Re)starts one adapter from its current configuration; resolves whether it runs here. Never throws. */
  restart(name: string): Promise<boolean> {
    return this.serial(name, () => this.restartNow(name));
  }

  /** A channel's restarts and lease changes run one after another: two at once would open two connections. */
  private serial(name: string, work: () => Promise<boolean>): Promise<boolean> {
    const next = (this.restarts.get(name) ?? Promise.resolve(false)).then(work);
    this.restarts.set(name, next);
    void next.then(() => {
      if (this.restarts.get(name) === next) this.restarts.delete(name);
    });
    return next;
  }

  private async restartNow(name: string): Promise<boolean> {
    const r = this.get(name);
    if (!r) return false;
    await this.halt(r, true);
    r.startFailed = false;
    r.settings = await this.deps.settings.get(r.adapter).catch((err: unknown) => {
      this.fail(r, `configuration could not be read: ${(err as Error).message}`);
      return undefined;
    });
    if (!r.settings || !r.settings.enabled || this.deps.signal.aborted) {
      await this.letGo(r);
      return false;
    }
    if (!(await this.claim(r))) return false;
    return this.startAdapter(r, r.settings);
  }

  /** Starts the adapter of a channel whose lease this process holds; resolves whether it runs. */
  private async startAdapter(r: Running, settings: ChannelSettings): Promise<boolean> {
    const controller = new AbortController();
    const signal = AbortSignal.any([controller.signal, this.deps.signal]);
    r.controller = controller;
    r.state = 'connecting';
    r.lastError = null;
    try {
      r.connection = await r.adapter.start(this.context(r, settings, signal));
      r.startedAt = new Date().toISOString();
      r.failedStarts = 0;
      return true;
    } catch (err) {
      controller.abort();
      r.controller = undefined;
      await this.startFailed(r, err);
      return false;
    }
  }

  /**
   * An adapter that did not start: its lease goes (kept, it would keep a standby process off a channel nobody runs);
   * a transient failure is retried here with the kit's backoff, an auth or permanent one waits for the owner.
   */
  private async startFailed(r: Running, err: unknown): Promise<void> {
    this.fail(r, (err as Error).message);
    r.startFailed = true;
    await this.letGo(r);
    const kind = asChannelError(err)?.kind;
    if (kind === 'auth' || kind === 'permanent' || this.deps.signal.aborted) return;
    const { baseMs, capMs } = this.deps.startBackoff ?? { baseMs: 1000, capMs: RECONNECT_CAP_MS };
    const delay = backoffDelay(r.failedStarts++, baseMs, capMs, Math.random);
    r.retry = setTimeout(() => void this.restart(r.adapter.name), delay);
    r.retry.unref();
  }

  /** Stops an adapter and releases its lease; its configuration stays. */
  async stop(name: string): Promise<void> {
    const r = this.channels.get(name);
    if (r) await this.serial(name, async () => (await this.halt(r, false), await this.letGo(r), false));
  }

  /** Stops every adapter and releases this process's leases (the module stops): a standby process takes them over. */
  async stopAll(): Promise<void> {
    await Promise.all([...this.channels.values()].map((r) => this.halt(r, false)));
    for (const r of this.channels.values()) r.held = false;
    await this.deps.leases.releaseAll().catch((err: unknown) => this.deps.log.warn({ err }, 'channel leases not released'));
  }

  /**
   * Every third of a lease: renews the leases held here, stopping at once an adapter whose lease another process took
   * (this one was found dead, or stalled past its lease); and tries the lease of each standby channel whose holder's
   * lease ended, so a channel whose process died runs again here within about a lease.
   */
  async tick(): Promise<void> {
    for (const r of this.list()) {
      const name = r.adapter.name;
      if (r.held) {
        const kept = await this.deps.leases.renew(name).catch((err: unknown) => {
          this.deps.log.warn({ err, channel: name }, 'channel lease not renewed');
          return true; // the store failed, no other process took it: keep running and try again at the next tick
        });
        if (!kept) await this.serial(name, () => this.lose(r));
      } else if (waitsForLease(r) && !(await this.deps.leases.holder(name).catch(() => 'unknown (store failed)'))) {
        void this.restart(name);
      }
    }
  }

  /** A node found dead: its channels' leases are dropped, and those on standby here start (one process wins each). */
  async takeOver(node: string): Promise<void> {
    for (const name of await this.deps.leases.forget(node)) if (waitsForLease(this.channels.get(name))) await this.restart(name);
  }

  /** Takes (or extends) the lease before an adapter starts; without it the channel is on standby. */
  private async claim(r: Running): Promise<boolean> {
    const name = r.adapter.name;
    try {
      r.held = await this.deps.leases.take(name);
      r.holder = r.held ? this.deps.leases.node : ((await this.deps.leases.holder(name)) ?? null);
    } catch (err) {
      // A lease kept (renewed) for an adapter that does not run would keep every process off the channel: let it go,
      // and the next tick tries again (waitsForLease).
      await this.letGo(r);
      this.fail(r, `the channel's lease could not be taken: ${(err as Error).message}`);
      return false;
    }
    if (!r.held) {
      r.state = 'standby';
      r.lastError = null;
    }
    return r.held;
  }

  /** The lease was taken by another process: the adapter stops here at once. */
  private async lose(r: Running): Promise<boolean> {
    if (!r.held) return false;
    r.held = false;
    await this.halt(r, false);
    r.state = 'standby';
    r.holder = (await this.deps.leases.holder(r.adapter.name).catch(() => undefined)) ?? null;
    this.deps.log.warn({ channel: r.adapter.name, holder: r.holder }, 'channel lease taken by another process: adapter stopped here');
    return false;
  }

  /** Releases the lease of a channel that no longer runs here (stopped, disabled, unconfigured, unloaded). */
  private async letGo(r: Running): Promise<void> {
    r.holder = null;
    if (!r.held) return;
    r.held = false;
    await this.deps.leases.release(r.adapter.name).catch((err: unknown) => this.deps.log.warn({ err, channel: r.adapter.name }, 'channel lease not released'));
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

  private async halt(r: Running, restarting: boolean): Promise<void> {
    const connection = r.connection;
    clearTimeout(r.retry);
    r.retry = undefined;
    this.deps.onHalt?.(r.adapter.name, restarting);
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

  private context(
    r: Running,
    settings: Pick<ChannelSettings, 'fields' | 'secrets'> & Partial<Pick<ChannelSettings, 'common'>>,
    signal: AbortSignal,
  ): AdapterContext {
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
      ...(settings.common
        ? { policy: { dm: settings.common.dm_policy, group: settings.common.group_policy, allowedUsers: settings.common.allowed_users } }
        : {}),
    };
  }
}

/** A send can go out: the adapter runs here, or another process runs it and takes the rows handed to it. */
export const canSend = (r: Running | undefined): boolean => Boolean(r && (r.connection || r.state === 'standby'));

/**
 * An enabled channel not running here that a tick (or a dead holder) may start: on standby, or in error after its
 * lease could not be taken (an adapter that failed to start waits for its own retry or for the owner instead).
 */
const waitsForLease = (r: Running | undefined): boolean =>
  Boolean(r && !r.held && r.settings?.enabled && (r.state === 'standby' || (r.state === 'error' && !r.startFailed)));

const blank = (adapter: ChannelAdapter): Running => ({
  adapter,
  state: 'stopped',
  held: false,
  holder: null,
  lastError: null,
  startedAt: null,
  lastMessageAt: null,
  received: 0,
  sent: 0,
  startFailed: false,
  failedStarts: 0,
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
