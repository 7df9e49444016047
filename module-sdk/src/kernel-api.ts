import type { ModuleInfo } from './hooks.ts';
import type { JsonSchema } from './settings.ts';

/** A route as registered in the current HTTP generation. */
export interface RouteInfo {
  method: string;
  url: string;
  module: string;
  schema?: {
    summary?: string;
    description?: string;
    tags?: readonly string[];
    params?: JsonSchema;
    querystring?: JsonSchema;
    body?: JsonSchema;
    response?: Record<string, JsonSchema>;
  };
  websocket: boolean;
  public: boolean;
}

/**
 * The configuration as a module may see it: never the secret values. Editing (persisting a value
 * into config.toml) is the config-api module's business; the kernel validates and applies.
 */
export interface ConfigAccess {
  /** Absolute path of config.toml. */
  readonly file: string;
  /** The JSON Schema of the whole file: kernel keys plus every known module's section and keys. */
  schema(): JsonSchema;
  /** Effective configuration (defaults filled in) with secret values replaced. */
  redacted(): Record<string, unknown>;
  /** The file's data as last adopted (no defaults filled in). */
  raw(): Record<string, unknown>;
  /** Reads and parses config.toml again (not adopted). Throws ConfigError naming the line. */
  read(): Record<string, unknown>;
  /** Validates a whole candidate file. Throws ConfigError naming the key and the problem; returns the warnings. */
  check(raw: Record<string, unknown>): string[];
  /**
   * Adopts a candidate (validated again): the running configuration changes at once and the
   * config.changed hook fires. `path` names the changed key ('' for a whole reload).
   */
  apply(raw: Record<string, unknown>, path: string): Promise<{ changed: string[]; restartRequired: boolean }>;
}

/** What the kernel shares with modules. Everything else of the kernel is private. */
export interface KernelApi {
  readonly version: string;
  readonly startedAt: Date;
  readonly dev: boolean;
  /** Address the API listens on, once listening. */
  listenAddress(): string | undefined;
  /** host:port the API listens on, or will once booted (api_listen). */
  apiListen(): string;
  modules(): ModuleInfo[];
  routes(): RouteInfo[];
  readonly config: ConfigAccess;
  /**
   * The first log lines of this run (bounded), so a log sink that taps `log.line` later misses nothing of
   * start-up: tap, and take these, in the same turn.
   */
  earlyLogLines(): readonly string[];
  /** Asks the kernel to shut down gracefully (after the current reply is sent). */
  shutdown(reason: string): void;
  /** Number of hot reloads done since start. */
  reloadCount(): number;
  /**
   * Replaces a running module with a fresh copy of its code, read again from disk, all or nothing: when any
   * step fails the previous copy keeps serving (see docs/modules.md, Hot reload). Resolves with the outcome.
   */
  reloadModule(name: string): Promise<{ ok: boolean; error?: string; ms: number }>;
}
