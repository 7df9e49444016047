/**
 * The kernel's own part of config.toml, checked and with its defaults filled in. The kernel holds the schema, with what
 * each key means (kernel/config/settings.ts; docs/configuration.md). Every other key belongs to the module that claims it (module.toml `config_keys` / `config_section`).
 */
export interface KernelSettings {
  api_listen: string;
  log_level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  max_request_body_bytes: number;
  module_paths: string[];
  /** Proxies in front whose X-Forwarded-For names the client (request.ip). */
  trusted_proxies: string[];
  modules: { disabled: string[]; enabled: string[]; allow_disable_critical: string[] };
  startup: { on_boot_failure: 'continue' | 'abort' };
  /** The database: PostgreSQL when url (or TALON_DATABASE_URL) is set, else SQLite in the home. */
  database: { url?: string; statement_timeout_ms: number; pool_size: number };
}

/** JSON Schema as modules write it for their config and routes (`as const` objects fit). */
export type JsonSchema = Readonly<Record<string, unknown>>;
