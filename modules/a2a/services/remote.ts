/**
 * External A2A agents: discovery (their card, fetched under the SSRF rules),
 * and messages and tasks sent through the official SDK client, which speaks
 * A2A 1.0 or 0.3 JSON-RPC (or HTTP+JSON) as the card says. Sent tasks are
 * kept so their status can be read again (GET /api/a2a/tasks/{id}).
 */
import { randomUUID } from 'node:crypto';
import { HttpError, badRequest, lockInTransaction, notFound, type ChangeFeed, type Store } from '@talon/module-sdk';
import type { SecretVault } from '@talon/secrets';
import type { AgentCard, Task } from '@a2a-js/sdk';
import type { ClientFactory, Client } from '@a2a-js/sdk/client';
import { message, status } from './messages.ts';
import { isTerminal, taskView } from './shapes.ts';
import { a2aClient, a2aCore } from './sdk.ts';

const MAX_CARD_BYTES = 256 * 1024;

interface AgentRow {
  id: string;
  url: string;
  name: string;
  card: string;
  /** The bearer token, sealed; null: none. */
  token: string | null;
  discovered_at: string;
}

export interface RemoteDeps {
  store: Store;
  /** Discoveries are noted (topic REMOTE_AGENTS, key: the agent id), and the other processes' are heard. */
  changes: ChangeFeed;
  fetch: typeof fetch;
  vault: () => SecretVault;
  maxChars: () => number;
}

const tokenOwner = (agentId: string) => `a2a:token:${agentId}`;

export const REMOTE_AGENTS = 'remote-agents';

/**
 * The fetch of one agent that asks for a bearer token: the token goes only to the origin the operator discovered the
 * agent at, never to another host a card may name.
 */
export function withBearer(fetchImpl: typeof fetch, origin: string, token: string): typeof fetch {
  return (input, init = {}) => {
    const request = input instanceof Request ? input : undefined;
    const url = request ? request.url : String(input);
    if (new URL(url).origin !== origin) return fetchImpl(input, init);
    const headers = new Headers(init.headers ?? request?.headers);
    headers.set('authorization', `Bearer ${token}`);
    return fetchImpl(input, { ...init, headers });
  };
}

/** A refusal of the net module's rules (SSRF, scheme, size): its errors carry this name. */
const refused = (err: unknown) => (err as Error | undefined)?.name === 'FetchRefused';

/** Failures of the other side are 502 for our client, refusals of our SSRF rules 403. */
function upstream(what: string, err: unknown): never {
  if (err instanceof HttpError) throw err;
  if (refused(err)) {
    const hint = /SSRF/.test((err as Error).message) ? ' (add the host to [a2a] allowed_hosts to allow it)' : '';
    throw new HttpError(403, `${(err as Error).message}${hint}`);
  }
  const cause = (err as Error & { cause?: Error }).cause;
  throw new HttpError(502, `${what}: ${(err as Error).message}${cause ? ` (${cause.message})` : ''}`);
}

/** An agent's address as given: http(s) without credentials, or 400 (what it may reach is net's to decide). */
function targetUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw badRequest(`'${raw}' is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badRequest(`only http and https URLs are reached, not '${url.protocol}'`);
  if (url.username || url.password) throw badRequest('URLs with credentials are not reached');
  return url;
}

export function agentView(row: AgentRow) {
  const card = JSON.parse(row.card) as { description?: string; version?: string; skills?: Array<{ id: string; name: string; description?: string }> };
  return {
    id: row.id,
    url: row.url,
    name: row.name,
    description: card.description ?? '',
    version: card.version ?? '',
    skills: (card.skills ?? []).map((s) => ({ id: s.id, name: s.name, description: s.description ?? '' })),
    has_token: row.token !== null,
    discovered_at: row.discovered_at,
    card,
  };
}

/** An SDK client factory whose transports (JSON-RPC or HTTP+JSON, A2A 1.0 or 0.3) use this fetch. */
function factory(fetchImpl: typeof fetch): ClientFactory {
  const { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory } = a2aClient();
  const legacyCompat = { enabled: true };
  return new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat }), new RestTransportFactory({ fetchImpl, legacyCompat })],
    }),
  );
}

export class RemoteAgents {
  private ownFactory?: ClientFactory;
  private readonly clients = new Map<string, Promise<Client>>();
  /** The discovered agents, read at start and after each discovery: the a2a_send tool's description lists them on every model call. */
  private listed: ReturnType<typeof agentView>[] = [];

  constructor(private readonly deps: RemoteDeps) {}

  /** Reads the discovered agents (start, and when another process discovered one: its client is made again). */
  async load(changedId?: string): Promise<void> {
    if (changedId) this.clients.delete(changedId);
    const rows = await this.deps.store.many<AgentRow>('SELECT * FROM a2a_remote_agents ORDER BY discovered_at');
    this.listed = rows.map(agentView);
  }

  private get factory(): ClientFactory {
    return (this.ownFactory ??= factory(this.deps.fetch));
  }

  list(): readonly ReturnType<typeof agentView>[] {
    return this.listed;
  }

  /** By id, URL or name (read from the store: one another process discovered a moment ago is found). */
  async get(ref: string): Promise<AgentRow> {
    const row = await this.deps.store.one<AgentRow>('SELECT * FROM a2a_remote_agents WHERE id = ? OR url = ? OR name = ? LIMIT 1', [ref, ref, ref]);
    if (!row) throw notFound(`External A2A agent '${ref}' not found (discover it first: POST /api/a2a/discover {url})`);
    return row;
  }

  /**
   * Fetches the card at <url>/.well-known/agent.json (agent-card.json as fallback), or at the URL itself when it names
   * a .json file. `token`: the bearer the agent asks for (stored sealed; '' removes it; undefined keeps a stored one).
   */
  async discover(raw: string, token?: string) {
    let base: string;
    try {
      base = targetUrl(raw.trim()).toString().replace(/\/+$/, '');
    } catch (err) {
      return upstream('discovery', err);
    }
    const candidates = base.endsWith('.json') ? [base] : [`${base}/.well-known/agent.json`, `${base}/.well-known/agent-card.json`];
    const url = base.endsWith('.json') ? base.replace(/\/\.well-known\/[^/]+$/, '') : base;
    const existing = await this.deps.store.one<{ id: string; token: string | null }>('SELECT id, token FROM a2a_remote_agents WHERE url = ?', [url]);
    // A service with a key may keep its card behind it too: the card is fetched with the token (given, or kept).
    const bearer = token ?? (existing?.token ? this.deps.vault().open(existing.token, tokenOwner(existing.id)) : undefined);
    let card: Record<string, unknown> | undefined;
    let problem = '';
    for (const candidate of candidates) {
      try {
        card = await this.fetchCard(candidate, bearer || undefined);
        break;
      } catch (err) {
        if (refused(err)) upstream('discovery', err);
        problem = `${candidate}: ${(err as Error).message}`;
      }
    }
    if (!card) throw new HttpError(502, `no A2A agent card found (${problem})`);
    if (typeof card.name !== 'string' || !card.name) throw new HttpError(502, 'the agent card has no name');
    const now = new Date().toISOString();
    const name = card.name;
    const saved = await this.deps.store.tx(async (t) => {
      // The row is read again in the transaction: a discovery of the same URL (here or in another process) may have
      // made it meanwhile, and the token must be sealed for the id the row keeps. (PostgreSQL runs transactions side by
      // side: the URL's lock makes a discovery of it wait for the other's commit, as SQLite's one writer does.)
      await lockInTransaction(t, `a2a:remote:${url}`);
      const current = await t.one<{ id: string; token: string | null }>('SELECT id, token FROM a2a_remote_agents WHERE url = ?', [url]);
      const id = current?.id ?? randomUUID();
      const sealed = token === undefined ? (current?.token ?? null) : token ? this.deps.vault().seal(token, tokenOwner(id)) : null;
      const row: AgentRow = { id, url, name, card: JSON.stringify(card), token: sealed, discovered_at: now };
      await t.run(
        'INSERT INTO a2a_remote_agents (id, url, name, card, token, discovered_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (url) DO UPDATE SET name = excluded.name, card = excluded.card, token = excluded.token, discovered_at = excluded.discovered_at',
        [row.id, row.url, row.name, row.card, row.token, row.discovered_at],
      );
      await this.deps.changes.note(REMOTE_AGENTS, id, t);
      return row;
    });
    await this.load(saved.id);
    return agentView(saved);
  }

  /** Sends one text message; a blocking send waits for the reply. Returns the spec task shape. */
  async send(ref: string, text: string, blocking = true) {
    if (!text.trim()) throw badRequest('message has no text');
    if (text.length > this.deps.maxChars()) throw badRequest(`message is longer than ${this.deps.maxChars()} characters`);
    const agent = await this.get(ref);
    const client = await this.client(agent);
    const result = await client
      .sendMessage({
        tenant: '',
        message: message(a2aCore().Role.ROLE_USER, text),
        configuration: { acceptedOutputModes: ['text/plain'], taskPushNotificationConfig: undefined, returnImmediately: !blocking },
        metadata: undefined,
      })
      .catch((err) => upstream(`agent '${agent.name}' did not accept the message`, err));
    const localId = randomUUID();
    const task: Task =
      'status' in result
        ? result
        : {
            id: '',
            contextId: result.contextId,
            status: status(a2aCore().TaskState.TASK_STATE_COMPLETED, result),
            history: [],
            artifacts: [],
            metadata: undefined,
          };
    await this.save(localId, agent.id, task);
    return this.view(localId);
  }

  /** A sent task, refreshed from the other agent while it is not finished. */
  async task(localOrRemoteId: string) {
    const row = await this.row(localOrRemoteId);
    const stored = a2aCore().Task.fromJSON(JSON.parse(row.task));
    if (row.remote_id && !isTerminal(stored.status?.state ?? a2aCore().TaskState.TASK_STATE_UNSPECIFIED)) {
      const client = await this.client(await this.get(row.agent_id));
      const fresh = await client.getTask({ tenant: '', id: row.remote_id }).catch((err) => upstream('the other agent could not report the task', err));
      await this.save(row.id, row.agent_id, fresh);
    }
    return this.view(row.id);
  }

  /** Sent tasks not updated within the retention go. */
  async prune(retentionHours: number): Promise<void> {
    const cutoff = new Date(Date.now() - retentionHours * 3_600_000).toISOString();
    await this.deps.store.run('DELETE FROM a2a_remote_tasks WHERE updated_at < ?', [cutoff]);
  }

  private async view(localId: string) {
    const row = await this.row(localId);
    const task = a2aCore().Task.fromJSON(JSON.parse(row.task));
    return { ...taskView(task), task_id: row.id, remote_task_id: row.remote_id || null, agent_id: row.agent_id };
  }

  private async row(id: string) {
    const row = await this.deps.store.one<{ id: string; agent_id: string; remote_id: string; task: string }>(
      "SELECT id, agent_id, remote_id, task FROM a2a_remote_tasks WHERE id = ? OR (remote_id = ? AND remote_id != '') LIMIT 1",
      [id, id],
    );
    if (!row) throw notFound(`Task '${id}' not found`);
    return row;
  }

  private async save(localId: string, agentId: string, task: Task): Promise<void> {
    const now = new Date().toISOString();
    await this.deps.store.run(
      `INSERT INTO a2a_remote_tasks (id, agent_id, remote_id, state, task, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET state = excluded.state, task = excluded.task, updated_at = excluded.updated_at`,
      [
        localId,
        agentId,
        task.id,
        a2aCore().taskStateToJSON(task.status?.state ?? a2aCore().TaskState.TASK_STATE_UNSPECIFIED),
        JSON.stringify(a2aCore().Task.toJSON(task)),
        now,
        now,
      ],
    );
  }

  private client(agent: AgentRow): Promise<Client> {
    let client = this.clients.get(agent.id);
    if (!client) {
      const token = agent.token === null ? undefined : this.deps.vault().open(agent.token, tokenOwner(agent.id));
      const maker = token === undefined ? this.factory : factory(withBearer(this.deps.fetch, new URL(agent.url).origin, token));
      client = maker.createFromAgentCard(JSON.parse(agent.card) as AgentCard);
      client.catch(() => this.clients.delete(agent.id));
      this.clients.set(agent.id, client);
    }
    return client.catch((err) => upstream(`no usable interface on the card of '${agent.name}'`, err));
  }

  private async fetchCard(url: string, bearer: string | undefined): Promise<Record<string, unknown>> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (bearer) headers.authorization = `Bearer ${bearer}`;
    const res = await this.deps.fetch(url, { headers });
    if (res.status !== 200) {
      await res.body?.cancel();
      throw new Error(res.status === 401 ? 'HTTP 401: the card needs a key; give it as token' : `HTTP ${res.status}`);
    }
    const text = await readCapped(res, MAX_CARD_BYTES);
    const card = JSON.parse(text) as unknown;
    if (!card || typeof card !== 'object' || Array.isArray(card)) throw new Error('not a JSON object');
    return card as Record<string, unknown>;
  }
}

async function readCapped(res: Response, max: number): Promise<string> {
  const reader = res.body!.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > max) {
      await reader.cancel();
      throw new Error(`the card is larger than ${max} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
