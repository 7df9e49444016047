/** The approval records and the decision trail in the service store. */
import type { Queries, Store } from '@talon/module-sdk';
import type { ApprovalRecord, ApprovalStatus, RiskLevel } from '@talon/approvals';

/** A tool call held until a human decides. */
export interface HeldCall {
  tool: string;
  input: Record<string, unknown>;
  session_id: string;
  /** The model's id of the call (its tool_use id): the chat shows the request on that call's step. */
  call_id?: string;
}

/** How a held call ended, for the resumer. */
export type Ending = 'approved' | 'rejected' | 'expired' | 'skipped';

interface Row extends Omit<ApprovalRecord, 'payload' | 'notified'> {
  payload: string;
  notified: number | null;
  escalations: number;
  tool_call: string | null;
  node: string | null;
}

export interface StoredApproval extends ApprovalRecord {
  escalations: number;
  held?: HeldCall;
  /** The process whose agent asked (held calls): it resumes the agent after the decision. */
  node: string | null;
}

export interface AuditEntry {
  id: number;
  request_id: string;
  agent_id: string;
  action: string;
  risk_level: RiskLevel;
  decision: string;
  decided_by: string | null;
  decided_at: string;
  second_factor_used: boolean;
  reason: string | null;
}

const COLUMNS =
  'id, agent_id, agent_name, action, description, payload, risk_level, status, created_at, decided_at, decided_by, expires_at, escalations, tool_call, notified, node';

/** What GET /api/approvals may narrow the list to. */
export interface ListFilter {
  agentId?: string;
  status?: ApprovalStatus;
}

function filtered(filter: ListFilter): { where: string; args: string[] } {
  const terms: string[] = [];
  const args: string[] = [];
  if (filter.agentId !== undefined) {
    terms.push('agent_id = ?');
    args.push(filter.agentId);
  }
  if (filter.status !== undefined) {
    terms.push('status = ?');
    args.push(filter.status);
  }
  return { where: terms.length ? `WHERE ${terms.join(' AND ')}` : '', args };
}

const marks = (n: number) => Array.from({ length: n }, () => '?').join(', ');

function fromRow(row: Row): StoredApproval {
  const { tool_call, payload, notified, ...rest } = row;
  return {
    ...rest,
    payload: JSON.parse(payload) as Record<string, unknown>,
    notified: notified === null ? null : notified === 1,
    ...(tool_call ? { held: JSON.parse(tool_call) as HeldCall } : {}),
  };
}

export class ApprovalStore {
  constructor(private readonly store: Store) {}

  tx<T>(work: (t: Queries) => Promise<T>): Promise<T> {
    return this.store.tx(work);
  }

  async insert(t: Queries, a: StoredApproval): Promise<void> {
    await t.run(`INSERT INTO approvals_requests (${COLUMNS}) VALUES (${marks(16)})`, [
      a.id,
      a.agent_id,
      a.agent_name,
      a.action,
      a.description,
      JSON.stringify(a.payload),
      a.risk_level,
      a.status,
      a.created_at,
      a.decided_at,
      a.decided_by,
      a.expires_at,
      a.escalations,
      a.held ? JSON.stringify(a.held) : null,
      a.notified === null ? null : Number(a.notified),
      a.node,
    ]);
  }

  async get(id: string, on: Queries = this.store): Promise<StoredApproval | undefined> {
    const row = await on.one<Row>(`SELECT ${COLUMNS} FROM approvals_requests WHERE id = ?`, [id]);
    return row && fromRow(row);
  }

  /** Pending first, then newest; of one agent and one status when the filter names them. */
  async list(filter: ListFilter, limit: number, offset: number): Promise<StoredApproval[]> {
    const { where, args } = filtered(filter);
    const rows = await this.store.many<Row>(`SELECT ${COLUMNS} FROM approvals_requests ${where} ORDER BY pending DESC, created_at DESC LIMIT ? OFFSET ?`, [
      ...args,
      limit,
      offset,
    ]);
    return rows.map(fromRow);
  }

  async total(filter: ListFilter = {}): Promise<number> {
    const { where, args } = filtered(filter);
    return (await this.store.one<{ n: number }>(`SELECT COUNT(*) AS n FROM approvals_requests ${where}`, args))!.n;
  }

  /** The pending held calls of an agent's tool, read in the creating transaction (a repeated call joins one of them). */
  async pendingHeld(t: Queries, agentId: string, tool: string): Promise<StoredApproval[]> {
    const rows = await t.many<Row>(
      `SELECT ${COLUMNS} FROM approvals_requests WHERE status = 'pending' AND agent_id = ? AND action = ? AND tool_call IS NOT NULL`,
      [agentId, tool],
    );
    return rows.map(fromRow);
  }

  /** Every pending request's agent (the in-memory count is built from it). */
  pending(): Promise<Array<{ id: string; agent_id: string }>> {
    return this.store.many("SELECT id, agent_id FROM approvals_requests WHERE status = 'pending'");
  }

  /** Pending requests whose time is up. */
  async due(now: string): Promise<StoredApproval[]> {
    const rows = await this.store.many<Row>(`SELECT ${COLUMNS} FROM approvals_requests WHERE status = 'pending' AND expires_at <= ?`, [now]);
    return rows.map(fromRow);
  }

  /** Moves a pending request to its decision; false when it was no longer pending (someone decided first, maybe elsewhere). */
  async resolve(t: Queries, id: string, status: Exclude<ApprovalStatus, 'pending'>, decidedBy: string, at: string, outcome: Ending): Promise<boolean> {
    const { changes } = await t.run(
      "UPDATE approvals_requests SET status = ?, decided_by = ?, decided_at = ?, outcome = ? WHERE id = ? AND status = 'pending'",
      [status, decidedBy, at, outcome, id],
    );
    return changes === 1;
  }

  /** One more escalation; false when another process escalated (or decided) it first. */
  async escalate(t: Queries, a: StoredApproval, expiresAt: string): Promise<boolean> {
    const { changes } = await t.run(
      "UPDATE approvals_requests SET escalations = escalations + 1, expires_at = ? WHERE id = ? AND status = 'pending' AND escalations = ?",
      [expiresAt, a.id, a.escalations],
    );
    return changes === 1;
  }

  /** Records a push's outcome; once a human was reached (an escalation may reach one later) it stays true. */
  async markNotified(id: string, reached: boolean): Promise<void> {
    await this.store.run('UPDATE approvals_requests SET notified = ? WHERE id = ? AND (notified IS NULL OR notified < ?)', [
      Number(reached),
      id,
      Number(reached),
    ]);
  }

  async audit(t: Queries, entry: Omit<AuditEntry, 'id'>): Promise<void> {
    await t.run(
      'INSERT INTO approvals_audit (request_id, agent_id, action, risk_level, decision, decided_by, at, second_factor_used, reason) VALUES (?,?,?,?,?,?,?,?,?)',
      [
        entry.request_id,
        entry.agent_id,
        entry.action,
        entry.risk_level,
        entry.decision,
        entry.decided_by,
        entry.decided_at,
        entry.second_factor_used ? 1 : 0,
        entry.reason,
      ],
    );
  }

  async auditPage(filter: { agentId?: string; limit: number; offset: number }): Promise<{ items: AuditEntry[]; total: number }> {
    const where = filter.agentId ? 'WHERE agent_id = ?' : '';
    const args = filter.agentId ? [filter.agentId] : [];
    const rows = await this.store.many<Omit<AuditEntry, 'second_factor_used'> & { second_factor_used: number }>(
      `SELECT seq AS id, request_id, agent_id, action, risk_level, decision, decided_by, at AS decided_at, second_factor_used, reason FROM approvals_audit ${where} ORDER BY seq DESC LIMIT ? OFFSET ?`,
      [...args, filter.limit, filter.offset],
    );
    const total = (await this.store.one<{ n: number }>(`SELECT COUNT(*) AS n FROM approvals_audit ${where}`, args))!.n;
    return { items: rows.map((r) => ({ ...r, second_factor_used: r.second_factor_used === 1 })), total };
  }

  /**
   * Claims the resumption of a decided held call for `node` (its owner): one conditional update, so it happens once
   * whichever processes try. The request and how it ended, or undefined when it is not this node's to resume.
   */
  async claimResume(id: string, node: string): Promise<{ approval: StoredApproval; outcome: Ending } | undefined> {
    const row = await this.store.one<Row & { outcome: Ending | null }>(
      `UPDATE approvals_requests SET resumed_at = ? WHERE id = ? AND node = ? AND status <> 'pending' AND resumed_at IS NULL AND tool_call IS NOT NULL
       RETURNING ${COLUMNS}, outcome`,
      [Date.now(), id, node],
    );
    if (!row) return undefined;
    const { outcome, ...rest } = row;
    return { approval: fromRow(rest), outcome: outcome ?? (rest.status === 'approved' ? 'approved' : rest.status === 'rejected' ? 'rejected' : 'expired') };
  }

  /**
   * Takes over the held calls not yet resumed of the given owners (a dead node), or of every owner not live (at
   * start; rows from before owners were recorded have none). Returns the ids of those already decided.
   */
  async adopt(node: string, from: { dead: string } | { notLive: readonly string[] }): Promise<string[]> {
    const owners =
      'dead' in from
        ? { sql: 'node = ?', args: [from.dead] }
        : { sql: `(node IS NULL${from.notLive.length ? ` OR node NOT IN (${marks(from.notLive.length)})` : ''})`, args: [...from.notLive] };
    const rows = await this.store.many<{ id: string; status: ApprovalStatus }>(
      `UPDATE approvals_requests SET node = ? WHERE tool_call IS NOT NULL AND resumed_at IS NULL AND ${owners.sql} RETURNING id, status`,
      [node, ...owners.args],
    );
    return rows.filter((r) => r.status !== 'pending').map((r) => r.id);
  }

  /** This node's decided held calls that wait for their resumption (one whose change it missed, e.g. during a reload). */
  async unresumed(node: string): Promise<string[]> {
    const rows = await this.store.many<{ id: string }>(
      "SELECT id FROM approvals_requests WHERE node = ? AND tool_call IS NOT NULL AND resumed_at IS NULL AND status <> 'pending'",
      [node],
    );
    return rows.map((r) => r.id);
  }
}
