/**
 * MCP servers added through the API, in the service's store and cached in memory (the server list is read at each
 * reconcile); their environment and header values are sealed by the service vault. A change is noted (topic
 * SERVERS): the other processes of the home read the rows again and reconnect what changed.
 */
import { conflict, lockInTransaction, type ChangeFeed, type Store } from '@talon/module-sdk';
import type { SecretVault } from '@talon/secrets';
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

export const SERVERS = 'servers';

/** Binds a sealed value to its server: it cannot be moved to another row. */
const owner = (id: string) => `mcp:server:${id}`;

export class ServerStore {
  private rows: Row[] = [];

  constructor(
    private readonly store: Store,
    private readonly changes: ChangeFeed,
    private readonly vault: () => SecretVault,
  ) {}

  /** Reads the stored servers (start, after a change here, and when another process noted one). */
  async load(): Promise<void> {
    this.rows = await this.store.many<Row>('SELECT id, name, template_id, transport, secrets, timeout_secs FROM mcp_servers ORDER BY created_at, name');
  }

  /** Every stored server; a row whose secrets no longer open (a lost key) keeps its spec without them. */
  list(onBroken: (name: string, err: Error) => void): ServerSpec[] {
    return this.rows.map((row) => {
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

  /** Inserts or replaces (by id); 409 when another server (stored by any process) has the name. */
  async save(spec: ServerSpec): Promise<void> {
    const now = new Date().toISOString();
    const sealed = this.vault().seal(JSON.stringify({ env: spec.env, headers: spec.headers } satisfies Secrets), owner(spec.id));
    await this.store.tx(async (t) => {
      // Two saves of one name at once (any process) take turns, so the second finds the first and answers 409, not a
      // unique-index violation.
      await lockInTransaction(t, `mcp:server-name:${spec.name}`);
      const taken = await t.one('SELECT id FROM mcp_servers WHERE name = ? AND id <> ?', [spec.name, spec.id]);
      if (taken) throw conflict(`an MCP server named '${spec.name}' already exists`);
      await t.run(
        `INSERT INTO mcp_servers (id, name, template_id, transport, secrets, timeout_secs, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET name = excluded.name, template_id = excluded.template_id, transport = excluded.transport,
           secrets = excluded.secrets, timeout_secs = excluded.timeout_secs, updated_at = excluded.updated_at`,
        [spec.id, spec.name, spec.templateId ?? null, JSON.stringify(spec.transport), sealed, spec.timeoutSecs ?? null, now, now],
      );
      await this.changes.note(SERVERS, spec.id, t);
    });
    await this.load();
  }

  async remove(id: string): Promise<void> {
    await this.store.tx(async (t) => {
      await t.run('DELETE FROM mcp_servers WHERE id = ?', [id]);
      await this.changes.note(SERVERS, id, t);
    });
    await this.load();
  }
}
