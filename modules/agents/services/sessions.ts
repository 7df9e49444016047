/**
 * Sessions and their messages in SQLite (agents_sessions, agents_messages).
 * Switching the current session and compaction live elsewhere (they need
 * the registry and the LLM); this is storage only.
 *
 * A turn reads its session's history before each model call and adds its
 * messages: the histories of recently used sessions are kept in memory, and
 * messages are written behind (WriteBehind: the turn's writes after its answer
 * share one transaction, so fewer WAL pages and fewer checkpoints). Every
 * other read of the tables, and every change, writes what is queued first.
 */
import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import { conflict, notFound, prepared, WriteBehind } from '@talon/module-sdk';
import type { StoredMessage } from '@talon/agents';
import type { ContentBlock } from '@talon/llm';

export interface SessionRow {
  id: string;
  agent_id: string;
  label: string | null;
  created_at: string;
  updated_at: string;
  summary: string | null;
}

export interface SessionSummary {
  session_id: string;
  agent_id: string;
  label: string | null;
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
}

export interface SessionQuery {
  agentId?: string;
  q?: string;
  limit: number;
  offset: number;
}

const SUMMARY_SQL = `SELECT s.id AS session_id, s.agent_id, s.label, s.created_at, s.updated_at,
  (SELECT COUNT(*) FROM agents_messages m WHERE m.session_id = s.id) AS message_count
  FROM agents_sessions s`;

/** Histories of this many recently used sessions stay in memory. */
const CACHED_SESSIONS = 64;

interface QueuedMessage {
  sessionId: string;
  role: StoredMessage['role'];
  content: string;
  blocks: string | null;
  createdAt: string;
}

export class SessionService {
  private readonly queue: WriteBehind<QueuedMessage>;
  /** Session id → its messages (oldest first) and summary; the most recently used last (LRU). */
  private readonly histories = new Map<string, { messages: StoredMessage[]; summary: string | null }>();

  constructor(
    private readonly db: Database,
    log: Logger,
  ) {
    this.queue = new WriteBehind(
      db,
      (m) => {
        prepared(this.db, 'INSERT INTO agents_messages (session_id, role, content, blocks, created_at) VALUES (?, ?, ?, ?, ?)').run(
          m.sessionId,
          m.role,
          m.content,
          m.blocks,
          m.createdAt,
        );
        prepared(this.db, 'UPDATE agents_sessions SET updated_at = ? WHERE id = ?').run(m.createdAt, m.sessionId);
      },
      (err, rows) => {
        // The histories in memory hold messages that never reached the database: read them again.
        for (const m of rows) this.histories.delete(m.sessionId);
        log.error({ err, messages: rows.length }, 'session messages could not be written');
      },
    );
  }

  /** Writes the queued messages (before a read of the tables, and when the module stops). */
  flush(): void {
    this.queue.flush();
  }

  create(agentId: string, label?: string): string {
    const id = randomUUID();
    const now = new Date().toISOString();
    if (label !== undefined) this.assertLabelFree(agentId, label);
    prepared(this.db, 'INSERT INTO agents_sessions (id, agent_id, label, created_at, updated_at) VALUES (?, ?, ?, ?, ?)').run(
      id,
      agentId,
      label ?? null,
      now,
      now,
    );
    return id;
  }

  get(sessionId: string): SessionRow | undefined {
    return prepared(this.db, 'SELECT * FROM agents_sessions WHERE id = ?').get(sessionId) as SessionRow | undefined;
  }

  /** The session or a 404. */
  require(sessionId: string): SessionRow {
    const row = this.get(sessionId);
    if (!row) throw notFound(`session '${sessionId}' not found`);
    return row;
  }

  exists(agentId: string, sessionId: string): boolean {
    return this.get(sessionId)?.agent_id === agentId;
  }

  summary(sessionId: string): SessionSummary | undefined {
    this.flush();
    return prepared(this.db, `${SUMMARY_SQL} WHERE s.id = ?`).get(sessionId) as SessionSummary | undefined;
  }

  list(query: SessionQuery): { items: SessionSummary[]; total: number } {
    this.flush();
    const where: string[] = [];
    const args: unknown[] = [];
    if (query.agentId) {
      where.push('s.agent_id = ?');
      args.push(query.agentId);
    }
    if (query.q) {
      where.push(
        `(s.label LIKE ? ESCAPE '\\' OR s.id LIKE ? ESCAPE '\\' OR EXISTS (SELECT 1 FROM agents_messages m WHERE m.session_id = s.id AND m.content LIKE ? ESCAPE '\\'))`,
      );
      const like = `%${query.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      args.push(like, like, like);
    }
    const clause = where.length ? ` WHERE ${where.join(' AND ')}` : '';
    const total = (prepared(this.db, `SELECT COUNT(*) AS n FROM agents_sessions s${clause}`).get(...args) as { n: number }).n;
    const items = prepared(this.db, `${SUMMARY_SQL}${clause} ORDER BY s.updated_at DESC, s.rowid DESC LIMIT ? OFFSET ?`).all(
      ...args,
      query.limit,
      query.offset,
    ) as SessionSummary[];
    return { items, total };
  }

  byLabel(agentId: string, label: string): SessionRow | undefined {
    return prepared(this.db, 'SELECT * FROM agents_sessions WHERE agent_id = ? AND label = ?').get(agentId, label) as SessionRow | undefined;
  }

  setLabel(sessionId: string, label: string | null): void {
    this.flush();
    const row = this.require(sessionId);
    if (label !== null && row.label !== label) this.assertLabelFree(row.agent_id, label);
    prepared(this.db, 'UPDATE agents_sessions SET label = ?, updated_at = ? WHERE id = ?').run(label, new Date().toISOString(), sessionId);
  }

  /** The session's messages, oldest first (from memory for recently used sessions). */
  messages(sessionId: string): StoredMessage[] {
    return [...this.history(sessionId).messages];
  }

  /** What a model call needs of the session: its messages and compaction summary (kept in memory while used). */
  history(sessionId: string): { readonly messages: readonly StoredMessage[]; readonly summary: string | null } {
    let history = this.histories.get(sessionId);
    if (history) this.histories.delete(sessionId);
    else {
      this.flush();
      history = { messages: this.rows(sessionId).map(toStored), summary: this.get(sessionId)?.summary ?? null };
      if (this.histories.size >= CACHED_SESSIONS) this.histories.delete(this.histories.keys().next().value!);
    }
    this.histories.set(sessionId, history);
    return history;
  }

  append(sessionId: string, message: { role: StoredMessage['role']; content: string; blocks?: ContentBlock[] }): void {
    const createdAt = new Date().toISOString();
    const stored: StoredMessage = { role: message.role, content: message.content, createdAt };
    if (message.blocks) stored.blocks = message.blocks;
    this.histories.get(sessionId)?.messages.push(stored);
    this.queue.push({ sessionId, role: message.role, content: message.content, blocks: message.blocks ? JSON.stringify(message.blocks) : null, createdAt });
  }

  /** Drops every message and the summary; the session itself stays. */
  clear(sessionId: string): void {
    this.flush();
    this.histories.delete(sessionId);
    this.db.transaction(() => {
      prepared(this.db, 'DELETE FROM agents_messages WHERE session_id = ?').run(sessionId);
      prepared(this.db, 'UPDATE agents_sessions SET summary = NULL, updated_at = ? WHERE id = ?').run(new Date().toISOString(), sessionId);
    })();
  }

  delete(sessionId: string): boolean {
    this.flush();
    this.histories.delete(sessionId);
    return this.db.transaction(() => {
      prepared(this.db, 'DELETE FROM agents_messages WHERE session_id = ?').run(sessionId);
      return prepared(this.db, 'DELETE FROM agents_sessions WHERE id = ?').run(sessionId).changes > 0;
    })();
  }

  /** Sessions whose agent no longer exists, removed with their messages. */
  deleteOrphans(liveAgentIds: ReadonlySet<string>): number {
    this.flush();
    const ids = (prepared(this.db, 'SELECT id, agent_id FROM agents_sessions').all() as Array<{ id: string; agent_id: string }>).filter(
      (r) => !liveAgentIds.has(r.agent_id),
    );
    for (const { id } of ids) this.delete(id);
    return ids.length;
  }

  /** Compaction's write: the summary replaces every message but the last `keep`. */
  replaceWithSummary(sessionId: string, summary: string, keep: number): number {
    this.flush();
    this.histories.delete(sessionId);
    return this.db.transaction(() => {
      const rows = this.rows(sessionId);
      const drop = rows.slice(0, Math.max(0, rows.length - keep));
      if (drop.length) prepared(this.db, 'DELETE FROM agents_messages WHERE session_id = ? AND seq <= ?').run(sessionId, drop[drop.length - 1].seq);
      prepared(this.db, 'UPDATE agents_sessions SET summary = ?, updated_at = ? WHERE id = ?').run(summary, new Date().toISOString(), sessionId);
      return drop.length;
    })();
  }

  private rows(sessionId: string): MessageRow[] {
    return prepared(this.db, 'SELECT seq, role, content, blocks, created_at FROM agents_messages WHERE session_id = ? ORDER BY seq').all(
      sessionId,
    ) as MessageRow[];
  }

  private assertLabelFree(agentId: string, label: string): void {
    if (this.byLabel(agentId, label)) throw conflict(`the agent already has a session labelled '${label}'`);
  }
}

function toStored(row: MessageRow): StoredMessage {
  const message: StoredMessage = { role: row.role, content: row.content, createdAt: row.created_at };
  if (row.blocks) message.blocks = JSON.parse(row.blocks) as ContentBlock[];
  return message;
}

/** Rough token estimate (4 characters a token), for context sizes. */
export function estimateTokens(messages: readonly StoredMessage[], summary?: string | null): number {
  let chars = summary?.length ?? 0;
  for (const m of messages) chars += m.blocks ? JSON.stringify(m.blocks).length : m.content.length;
  return Math.ceil(chars / 4);
}
