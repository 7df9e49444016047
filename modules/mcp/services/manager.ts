/**
 * All MCP server connections: the servers of config.toml and those added
 * through the API, reconciled by fingerprint (an unchanged server keeps its
 * connection; a changed one is reconnected), with aggregate health.
 */
import type { Logger } from 'pino';
import { conflict, notFound } from '@talon/module-sdk';
import { Connection, type ConnectionDeps } from './connection.ts';
import { fingerprint, type ServerSpec } from './spec.ts';
import { sanitise } from './naming.ts';

export type ManagerDeps = Omit<ConnectionDeps, 'log'> & { log: Logger };

export class McpManager {
  private readonly connections = new Map<string, { conn: Connection; print: string }>();
  private stopped = false;

  constructor(private readonly deps: ManagerDeps) {}

  list(): Connection[] {
    return [...this.connections.values()].map((c) => c.conn);
  }

  /** By id or name. */
  find(idOrName: string): Connection | undefined {
    const byId = this.connections.get(idOrName);
    if (byId) return byId.conn;
    return this.list().find((c) => c.spec.name === idOrName);
  }

  get(idOrName: string): Connection {
    const conn = this.find(idOrName);
    if (!conn) throw notFound(`MCP server '${idOrName}' not found`);
    return conn;
  }

  /** A new server's name must differ from the others also once sanitised (its tools are named after it). */
  checkNameFree(name: string, exceptId?: string): void {
    const clash = this.list().find((c) => c.spec.id !== exceptId && sanitise(c.spec.name) === sanitise(name));
    if (clash) throw conflict(`an MCP server named '${clash.spec.name}' already exists`);
  }

  /** Makes the running set match the specs; returns the names (re)connected. Connecting runs in the background. */
  reconcile(specs: readonly ServerSpec[]): string[] {
    if (this.stopped) return [];
    const wanted = new Map(specs.map((s) => [s.id, s]));
    for (const [id, { conn }] of this.connections) {
      if (!wanted.has(id)) this.drop(id, conn);
    }
    const started: string[] = [];
    for (const spec of specs) {
      const print = fingerprint(spec);
      const current = this.connections.get(spec.id);
      if (current && current.print === print && current.conn.spec.name === spec.name) continue;
      if (current) this.drop(spec.id, current.conn);
      const conn = new Connection(spec, { ...this.deps, log: this.deps.log });
      this.connections.set(spec.id, { conn, print });
      started.push(spec.name);
      void conn.connect();
    }
    return started;
  }

  /** Removes one server now and waits for its process tree to end. */
  async remove(id: string): Promise<void> {
    const current = this.connections.get(id);
    if (!current) return;
    this.connections.delete(id);
    await current.conn.stop();
    this.deps.onTools();
  }

  /** Retries servers that are not connected (reload). */
  retryFailed(): string[] {
    const failed = this.list().filter((c) => c.status === 'error');
    for (const c of failed) void c.connect();
    return failed.map((c) => c.spec.name);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const all = this.list();
    this.connections.clear();
    await Promise.all(all.map((c) => c.stop()));
  }

  health() {
    const servers = this.list().map((c) => ({
      id: c.spec.id,
      name: c.spec.name,
      status: c.status,
      connected: c.status === 'connected',
      tool_count: c.tools.length,
      last_error: c.lastError ?? null,
      last_ok: c.lastOk ?? null,
      connected_since: c.connectedSince ?? null,
      consecutive_failures: c.consecutiveFailures,
      reconnect_attempts: c.reconnectAttempts,
      next_retry_at: c.nextRetryAt ?? null,
      pid: c.pid() ?? null,
    }));
    const connected = servers.filter((s) => s.connected).length;
    // A server between two attempts (connecting again after failures) still counts as failing.
    const failing = servers.filter((s) => !s.connected && s.consecutive_failures > 0).length;
    const status = failing === 0 ? 'ok' : connected === 0 && failing === servers.length ? 'down' : 'degraded';
    return { status, total: servers.length, connected, failing, servers };
  }

  private drop(id: string, conn: Connection): void {
    this.connections.delete(id);
    void conn.stop().then(() => this.deps.onTools());
  }
}
