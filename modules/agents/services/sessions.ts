/**
 * Sessions and their messages (agents_sessions, agents_messages), on the store.
 * Switching the current session and compaction live elsewhere (they need
 * the registry and the LLM); this is storage only.
 *
 * A turn reads its session's history before each model call and adds its
 * messages: the histories of recently used sessions are kept in memory, and
 * messages are written behind (WriteBehind: the turn's writes after its answer
 * share one transaction, so fewer WAL pages and fewer checkpoints). Every
 * other read of the tables, and every change, writes what is queued first.
 *
 * Other processes on the database: a process that writes a session's messages
 * (or clears, deletes or compacts it) notes 'sessions' with its id, and the
 * others drop their copy of that history (read again on next use).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { conflict, notFound, WriteBehind, type ChangeFeed, type Queries, type SqlValue, type Store } from '@talon/module-sdk';
import type { StoredFile, StoredMessage } from '@talon/agents';
import type { ContentBlock } from '@talon/llm';

export interface SessionRow {
  id: string;
  agent_id: string;
  label: string | null;
  created_at: string;
  updated_at: string;
  summary: string | null;
  parent_id: string | null;
  forked_at: number | null;
}

export interface SessionSummary {
  session_id: string;
  agent_id: string;
  label: string | null;
  /** The label, or else the first line of the first message a person sent (null for an empty session). */
  title: string | null;
  parent_id: string | null;
  forked_at: number | null;
  message_count: number;
  created_at: string;
  updated_at: string;
}

interface MessageRow {
  seq: number;
  role: 'User' | 'Assistant';
  content: string;
  blocks: string | null;
  created_at: string;
  stopped: number;
  files: string | null;
}

export interface SessionQuery {
  agentId?: string;
  q?: string;
  limit: number;
  offset: number;
}

/** The change-feed topic of session histories (key: the session id). */
export const SESSIONS_TOPIC = 'sessions';

const SUMMARY_SQL = `SELECT s.id AS session_id, s.agent_id, s.label, s.parent_id, s.forked_at, s.created_at, s.updated_at,
  (SELECT COUNT(*) FROM agents_messages m WHERE m.session_id = s.id) AS message_count,
  (SELECT m.content FROM agents_messages m WHERE m.session_id = s.id AND m.role = 'User' AND TRIM(m.content) <> '' ORDER BY m.seq LIMIT 1) AS first_message
  FROM agents_sessions s`;

/** Longest default title (characters of the first line). */
const TITLE_CHARS = 80;

/** A session's title: its label, or else the first line of the first message a person sent (shortened); null when neither. */
export function titleOf(label: string | null, firstMessage: string | null | undefined): string | null {
  if (label !== null) return label;
  const line = firstMessage?.trim().split('\n', 1)[0].trim() ?? '';
  if (!line) return null;
  return line.length > TITLE_CHARS ? `${line.slice(0, TITLE_CHARS - 1)}…` : line;
}

/** A row of SUMMARY_SQL → its summary. */
function toSummary(row: Omit<SessionSummary, 'title'> & { first_message: string | null }): SessionSummary {
  const { first_message, ...rest } = row;
  return { ...rest, title: titleOf(row.label, first_message) };
}
type SummaryRow = Parameters<typeof toSummary>[0];

/** Histories of this many recently used sessions stay in memory. */
const CACHED_SESSIONS = 64;
/** A history read again this many times because messages kept arriving while it was read: then it is not cached. */
const LOAD_ATTEMPTS = 5;

interface QueuedMessage {
  sessionId: string;
  role: StoredMessage['role'];
  content: string;
  blocks: string | null;
  createdAt: string;
  stopped: boolean;
  files: string | null;
}

export interface History {
  readonly messages: readonly StoredMessage[];
  readonly summary: string | null;
}

export class SessionService {
  private readonly queue: WriteBehind<QueuedMessage>;
  /** Session id → its messages (oldest first) and summary; the most recently used last (LRU). */
  private readonly histories = new Map<string, { messages: StoredMessage[]; summary: string | null }>();
  /** Histories being read, with a count of what changed them meanwhile (an append, a note): such a read is redone. */
  private readonly loads = new Map<string, { promise: Promise<History>; changed: number }>();
  /** Sessions already noted in a transaction: a turn's messages cost one note per session, not one per message. */
  private readonly noted = new WeakMap<Queries, Set<string>>();

  constructor(
    private readonly store: Store,
    private readonly changes: ChangeFeed,
    log: Logger,
  ) {
    this.queue = new WriteBehind(
      store,
      (t, m) => this.insert(t, m),
      (err, rows) => {
        // The histories in memory hold messages that never reached the database: read them again.
        for (const m of rows) this.forget(m.sessionId);
        log.error({ err, messages: rows.length }, 'session messages could not be written');
      },
    );
    changes.on(SESSIONS_TOPIC, (sessionId) => this.forget(sessionId));
  }

  /** Writes the queued messages (before a read of the tables, and when the module stops). */
  flush(): Promise<void> {
    return this.queue.flush();
  }

  /** A new session of the agent; `q` is the transaction it belongs to (an agent's first session is made with it). */
  async create(agentId: string, label?: string, q: Queries = this.store): Promise<string> {
    const id = randomUUID();
    const now = new Date().toISOString();
    if (label !== undefined) await this.assertLabelFree(agentId, label, q);
    await unique(
      q.run('INSERT INTO agents_sessions (id, agent_id, label, created_at, updated_at) VALUES (?, ?, ?, ?, ?)', [id, agentId, label ?? null, now, now]),
      label,
    );
    return id;
  }

  get(sessionId: string): Promise<SessionRow | undefined> {
    return this.store.one<SessionRow>('SELECT * FROM agents_sessions WHERE id = ?', [sessionId]);
  }

  /** The session or a 404. */
  async require(sessionId: string): Promise<SessionRow> {
    const row = await this.get(sessionId);
    if (!row) throw notFound(`session '${sessionId}' not found`);
    return row;
  }

  async exists(agentId: string, sessionId: string): Promise<boolean> {
    return (await this.get(sessionId))?.agent_id === agentId;
  }

  async summary(sessionId: string): Promise<SessionSummary | undefined> {
    await this.flush();
    const row = await this.store.one<SummaryRow>(`${SUMMARY_SQL} WHERE s.id = ?`, [sessionId]);
    return row && toSummary(row);
  }

  async list(query: SessionQuery): Promise<{ items: SessionSummary[]; total: number }> {
    await this.flush();
    const where: string[] = [];
    const args: SqlValue[] = [];
    if (query.agentId) {
      where.push('s.agent_id = ?');
      args.push(query.agentId);
    }
    if (query.q) {
      // Case-insensitive on every engine (SQLite's LIKE is, PostgreSQL's is not).
      where.push(
        `(LOWER(s.label) LIKE ? ESCAPE '\\' OR LOWER(s.id) LIKE ? ESCAPE '\\' OR EXISTS (SELECT 1 FROM agents_messages m WHERE m.session_id = s.id AND LOWER(m.content) LIKE ? ESCAPE '\\'))`,
      );
      const like = `%${query.q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      args.push(like, like, like);
    }
    const clause = where.length ? ` WHERE ${where.join(' AND ')}` : '';
    const total = (await this.store.one<{ n: number }>(`SELECT COUNT(*) AS n FROM agents_sessions s${clause}`, args))?.n ?? 0;
    // Newest first; sessions updated in the same millisecond in the order they were made (SQLite's rowid).
    const order = this.store.pick({ sqlite: 's.updated_at DESC, s.rowid DESC', postgres: 's.updated_at DESC, s.created_at DESC, s.id DESC' });
    const rows = await this.store.many<SummaryRow>(`${SUMMARY_SQL}${clause} ORDER BY ${order} LIMIT ? OFFSET ?`, [...args, query.limit, query.offset]);
    return { items: rows.map(toSummary), total };
  }

  /** Ids of every session of the agent. */
  async idsOf(agentId: string): Promise<string[]> {
    return (await this.store.many<{ id: string }>('SELECT id FROM agents_sessions WHERE agent_id = ?', [agentId])).map((r) => r.id);
  }

  byLabel(agentId: string, label: string, q: Queries = this.store): Promise<SessionRow | undefined> {
    return q.one<SessionRow>('SELECT * FROM agents_sessions WHERE agent_id = ? AND label = ?', [agentId, label]);
  }

  async setLabel(sessionId: string, label: string | null): Promise<void> {
    const row = await this.require(sessionId);
    if (label !== null && row.label !== label) await this.assertLabelFree(row.agent_id, label);
    await unique(
      this.store.run('UPDATE agents_sessions SET label = ?, updated_at = ? WHERE id = ?', [label, new Date().toISOString(), sessionId]),
      label ?? undefined,
    );
  }

  /** The session's messages, oldest first (from memory for recently used sessions). */
  async messages(sessionId: string): Promise<StoredMessage[]> {
    return [...(await this.history(sessionId)).messages];
  }

  /** What a model call needs of the session: its messages and compaction summary (kept in memory while used). */
  history(sessionId: string): Promise<History> {
    const hit = this.histories.get(sessionId);
    if (hit) {
      this.histories.delete(sessionId);
      this.histories.set(sessionId, hit);
      return Promise.resolve(hit);
    }
    const running = this.loads.get(sessionId);
    if (running) return running.promise;
    const state = { changed: 0 };
    const promise = this.load(sessionId, state).finally(() => {
      if (this.loads.get(sessionId)?.promise === promise) this.loads.delete(sessionId);
    });
    this.loads.set(sessionId, Object.assign(state, { promise }));
    return promise;
  }

  /**
   * Reads a history into memory. Queued messages are written first (a write-behind transaction that took rows is
   * ordered before the read by the store), and a read that a message or a note overtook is redone, so the copy in
   * memory never misses a message.
   */
  private async load(sessionId: string, state: { changed: number }): Promise<History> {
    for (let attempt = 1; ; attempt++) {
      state.changed = 0;
      await this.flush();
      const rows = await this.store.many<MessageRow>(
        'SELECT seq, role, content, blocks, created_at, stopped, files FROM agents_messages WHERE session_id = ? ORDER BY seq',
        [sessionId],
      );
      const summary = (await this.store.one<{ summary: string | null }>('SELECT summary FROM agents_sessions WHERE id = ?', [sessionId]))?.summary ?? null;
      const history = { messages: rows.map(toStored), summary };
      if (state.changed === 0) {
        if (this.histories.size >= CACHED_SESSIONS) this.histories.delete(this.histories.keys().next().value!);
        this.histories.set(sessionId, history);
        return history;
      }
      // Busy: answer from this read without keeping it; the next use reads again.
      if (attempt >= LOAD_ATTEMPTS) return history;
    }
  }

  append(sessionId: string, message: { role: StoredMessage['role']; content: string; blocks?: ContentBlock[]; stopped?: boolean; files?: StoredFile[] }): void {
    const createdAt = new Date().toISOString();
    const stored: StoredMessage = { role: message.role, content: message.content, createdAt };
    if (message.blocks) stored.blocks = message.blocks;
    if (message.stopped) stored.stopped = true;
    if (message.files?.length) stored.files = [...message.files];
    this.histories.get(sessionId)?.messages.push(stored);
    const load = this.loads.get(sessionId);
    if (load) load.changed++;
    this.queue.push({
      sessionId,
      role: message.role,
      content: message.content,
      blocks: message.blocks ? JSON.stringify(message.blocks) : null,
      createdAt,
      stopped: Boolean(message.stopped),
      files: message.files?.length ? JSON.stringify(message.files) : null,
    });
  }

  /**
   * A branch of the session: a new session of its agent holding a copy of the first `at` messages (and the
   * compaction summary), linked to its parent, which stays as it was. Editing a sent message or regenerating a
   * reply goes on in a branch, so the conversation before the change is kept.
   */
  async fork(sessionId: string, at: number): Promise<string> {
    await this.flush();
    const parent = await this.require(sessionId);
    const id = randomUUID();
    const now = new Date().toISOString();
    await this.store.tx(async (t) => {
      const seqs = await t.many<{ seq: number }>('SELECT seq FROM agents_messages WHERE session_id = ? ORDER BY seq LIMIT ?', [sessionId, at]);
      await t.run(
        'INSERT INTO agents_sessions (id, agent_id, label, created_at, updated_at, summary, parent_id, forked_at) VALUES (?, ?, NULL, ?, ?, ?, ?, ?)',
        [id, parent.agent_id, now, now, parent.summary, sessionId, at],
      );
      if (seqs.length) {
        await t.run(
          `INSERT INTO agents_messages (session_id, role, content, blocks, created_at, stopped, files)
           SELECT ?, role, content, blocks, created_at, stopped, files FROM agents_messages WHERE session_id = ? AND seq <= ? ORDER BY seq`,
          [id, sessionId, seqs[seqs.length - 1].seq],
        );
      }
    });
    return id;
  }

  /**
   * A user message written in the caller's transaction (a channel's adoption), not behind: the copy in memory is
   * dropped so the next read, which waits for the transaction, sees it.
   */
  async appendInTx(t: Queries, sessionId: string, content: string, blocks?: ContentBlock[]): Promise<void> {
    const stored = blocks?.length ? JSON.stringify(blocks) : null;
    await this.insert(t, { sessionId, role: 'User', content, blocks: stored, createdAt: new Date().toISOString(), stopped: false, files: null });
    this.forget(sessionId);
  }

  /** Drops the copy in memory (another process changed the session, or a write failed); '' drops them all. */
  forget(sessionId: string): void {
    if (sessionId === '') {
      this.histories.clear();
      for (const load of this.loads.values()) load.changed++;
      return;
    }
    this.histories.delete(sessionId);
    const load = this.loads.get(sessionId);
    if (load) load.changed++;
  }

  /** Drops every message and the summary; the session itself stays. */
  async clear(sessionId: string): Promise<void> {
    await this.flush();
    this.forget(sessionId);
    await this.store.tx(async (t) => {
      await t.run('DELETE FROM agents_messages WHERE session_id = ?', [sessionId]);
      await t.run('UPDATE agents_sessions SET summary = NULL, updated_at = ? WHERE id = ?', [new Date().toISOString(), sessionId]);
      await this.changes.note(SESSIONS_TOPIC, sessionId, t);
    });
  }

  async delete(sessionId: string): Promise<boolean> {
    await this.flush();
    this.forget(sessionId);
    return this.store.tx(async (t) => {
      await t.run('DELETE FROM agents_messages WHERE session_id = ?', [sessionId]);
      const { changes } = await t.run('DELETE FROM agents_sessions WHERE id = ?', [sessionId]);
      // The session's lease row, unless a turn of it still runs (it frees the row when it ends).
      await t.run('DELETE FROM agents_session_leases WHERE session_id = ? AND turn_id IS NULL', [sessionId]);
      await this.changes.note(SESSIONS_TOPIC, sessionId, t);
      return changes > 0;
    });
  }

  /** Sessions whose agent no longer exists, removed with their messages. */
  async deleteOrphans(liveAgentIds: ReadonlySet<string>): Promise<number> {
    await this.flush();
    const rows = await this.store.many<{ id: string; agent_id: string }>('SELECT id, agent_id FROM agents_sessions');
    const orphans = rows.filter((r) => !liveAgentIds.has(r.agent_id));
    for (const { id } of orphans) await this.delete(id);
    return orphans.length;
  }

  /** Compaction's write: the summary replaces every message but the last `keep`. */
  async replaceWithSummary(sessionId: string, summary: string, keep: number): Promise<number> {
    await this.flush();
    this.forget(sessionId);
    return this.store.tx(async (t) => {
      const rows = await t.many<{ seq: number }>('SELECT seq FROM agents_messages WHERE session_id = ? ORDER BY seq', [sessionId]);
      const drop = rows.slice(0, Math.max(0, rows.length - keep));
      if (drop.length) await t.run('DELETE FROM agents_messages WHERE session_id = ? AND seq <= ?', [sessionId, drop[drop.length - 1].seq]);
      await t.run('UPDATE agents_sessions SET summary = ?, updated_at = ? WHERE id = ?', [summary, new Date().toISOString(), sessionId]);
      await this.changes.note(SESSIONS_TOPIC, sessionId, t);
      return drop.length;
    });
  }

  /** One queued message; the first of a session in a transaction notes the session for the other processes. */
  private async insert(t: Queries, m: QueuedMessage): Promise<void> {
    const insert = 'INSERT INTO agents_messages (session_id, role, content, blocks, created_at, stopped, files) VALUES (?, ?, ?, ?, ?, ?, ?)';
    const values = [m.sessionId, m.role, m.content, m.blocks, m.createdAt, m.stopped ? 1 : 0, m.files];
    const touch = 'UPDATE agents_sessions SET updated_at = ? WHERE id = ?';
    if (t.dialect === 'postgres') {
      // One statement, so one round trip: the session's updated_at is set by the message's insert.
      await t.run(`WITH touched AS (${touch}) ${insert}`, [m.createdAt, m.sessionId, ...values]);
    } else {
      await t.run(insert, values);
      await t.run(touch, [m.createdAt, m.sessionId]);
    }
    let noted = this.noted.get(t);
    if (!noted) this.noted.set(t, (noted = new Set()));
    if (noted.has(m.sessionId)) return;
    noted.add(m.sessionId);
    await this.changes.note(SESSIONS_TOPIC, m.sessionId, t);
  }

  private async assertLabelFree(agentId: string, label: string, q: Queries = this.store): Promise<void> {
    if (await this.byLabel(agentId, label, q)) throw conflict(`the agent already has a session labelled '${label}'`);
  }
}

/** A label taken meanwhile (by another process) breaks the unique index: the same 409 as the check before. */
async function unique<T>(write: Promise<T>, label: string | undefined): Promise<T> {
  try {
    return await write;
  } catch (err) {
    if (label !== undefined && /UNIQUE|unique constraint/i.test((err as Error).message)) throw conflict(`the agent already has a session labelled '${label}'`);
    throw err;
  }
}

function toStored(row: MessageRow): StoredMessage {
  const message: StoredMessage = { role: row.role, content: row.content, createdAt: row.created_at };
  if (row.blocks) message.blocks = JSON.parse(row.blocks) as ContentBlock[];
  if (row.stopped) message.stopped = true;
  if (row.files) message.files = JSON.parse(row.files) as StoredFile[];
  return message;
}

/** Rough token estimate (4 characters a token), for context sizes. */
export function estimateTokens(messages: readonly StoredMessage[], summary?: string | null): number {
  let chars = summary?.length ?? 0;
  for (const m of messages) chars += m.blocks ? JSON.stringify(m.blocks).length : m.content.length;
  return Math.ceil(chars / 4);
}
