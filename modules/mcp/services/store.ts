/** MCP servers added through the API, in SQLite; their environment and header values are sealed by the service vault. */
import type { Database } from 'better-sqlite3';
import { prepared } from '@talon/module-sdk';
import type { SecretVault } from '@talon/catalog';
import type { ServerSpec, TransportSpec } from './spec.ts';

interface Row {
  id: string;
  name: string;
  template_id: string | null;
  transport: string;
  secrets: string;
  timeout_secs: number | null;
}

interface Secrets {
  env: Record<string, string>;
  headers: Record<string, string>;
}

/** Binds a sealed value to its server: it cannot be moved to another row. */
const owner = (id: string) => `mcp:server:${id}`;

export class ServerStore {
  constructor(
    private readonly db: Database,
    private readonly vault: () => SecretVault,
  ) {}

  /** Every stored server; a row whose secrets no longer open (a lost key) keeps its spec without them. */
  list(onBroken: (name: string, err: Error) => void): ServerSpec[] {
    const rows = prepared<[], Row>(this.db, 'SELECT id, name, template_id, transport, secrets, timeout_secs FROM mcp_servers ORDER BY created_at, name').all();
    return rows.map((row) => {
      let secrets: Secrets = { env: {}, headers: {} };
      try {
        secrets = JSON.parse(this.vault().open(row.secrets, owner(row.id))) as Secrets;
      } catch (err) {
        onBroken(row.name, err as Error);
      }
      return {
        id: row.id,
        name: row.name,
        source: 'api',
        templateId: row.template_id ?? undefined,
        transport: JSON.parse(row.transport) as TransportSpec,
        env: secrets.env,
        headers: secrets.headers,
        timeoutSecs: row.timeout_secs ?? undefined,
      };
    });
  }

  /** Inserts or replaces (by id). */
  save(spec: ServerSpec): void {
    const now = new Date().toISOString();
    const sealed = this.vault().seal(JSON.stringify({ env: spec.env, headers: spec.headers } satisfies Secrets), owner(spec.id));
    prepared(
      this.db,
      `INSERT INTO mcp_servers (id, name, template_id, transport, secrets, timeout_secs, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT(id) DO UPDATE SET name = excluded.name, template_id = excluded.template_id, transport = excluded.transport,
         secrets = excluded.secrets, timeout_secs = excluded.timeout_secs, updated_at = excluded.updated_at`,
    ).run(spec.id, spec.name, spec.templateId ?? null, JSON.stringify(spec.transport), sealed, spec.timeoutSecs ?? null, now, now);
  }

  remove(id: string): void {
    prepared(this.db, 'DELETE FROM mcp_servers WHERE id = ?').run(id);
  }
}
