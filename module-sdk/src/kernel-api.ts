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
    tags?: string[];
    params?: JsonSchema;
    querystring?: JsonSchema;
    body?: JsonSchema;
    response?: Record<string, JsonSchema>;
  };
  websocket: boolean;
  public: boolean;
}

export interface ConfigApi {
  /** Effective configuration with defaults, secrets included: never send this to a client. */
  effective(): Record<string, unknown>;
  /** Effective configuration with secret values replaced. */
  redacted(): Record<string, unknown>;
  /** The JSON Schema of the whole file: kernel keys plus every known module section. */
  schema(): JsonSchema;
  /** Sets one dotted key, validates, applies through the config-changed hook and persists it. */
  set(path: string, value: unknown): Promise<{ path: string; value: unknown; restartRequired: boolean }>;
  /** Re-reads the file; throws with the reason when it is invalid (the running config stays). */
  reload(): Promise<{ changed: string[] }>;
  /** Absolute path of config.toml. */
  readonly file: string;
}

export interface LogBus {
  /** Receives every structured log line as JSON text. Returns the unsubscribe function. */
  subscribe(listener: (line: string) => void): () => void;
}

/** What the kernel shares with modules. Everything else of the kernel is private. */
export interface KernelApi {
  readonly version: string;
  readonly startedAt: Date;
  readonly dev: boolean;
  /** Address the API listens on, once listening. */
  listenAddress(): string | undefined;
  modules(): ModuleInfo[];
  routes(): RouteInfo[];
  readonly config: ConfigApi;
  readonly logs: LogBus;
  /** Asks the kernel to shut down gracefully (after the current reply is sent). */
  shutdown(reason: string): void;
  /** Number of hot reloads done since start. */
  reloadCount(): number;
}
