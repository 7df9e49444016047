/** The approval records and the decision trail in SQLite. */
import type { Database } from 'better-sqlite3';
import { statements } from '@talon/module-sdk';
import type { ApprovalRecord, ApprovalStatus, RiskLevel } from '@talon/approvals';

/** A tool call held until a human decides. */
export interface HeldCall {
  tool: string;
  input: Record<string, unknown>;
  session_id: string;
}

interface Row extends Omit<ApprovalRecord, 'payload' | 'notified'> {
  payload: string;
  notified: number | null;
  escalations: number;
  tool_call: string | null;
}

export interface StoredApproval extends ApprovalRecord {
  escalations: number;
  held?: HeldCall;
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
  'id, agent_id, agent_name, action, description, payload, risk_level, status, created_at, decided_at, decided_by, expires_at, escalations, tool_call, notified';

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
  private readonly sql;

  constructor(private readonly db: Database) {
    this.sql = statements(db);
  }

  insert(a: StoredApproval): void {
    this.sql(`INSERT INTO approvals_requests (${COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`).run(
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
    );
  }

  get(id: string): StoredApproval | undefined {
    const row = this.sql<[string], Row>(`SELECT ${COLUMNS} FROM approvals_requests WHERE id = ?`).get(id);
    return row && fromRow(row);
  }

  /** Pending first, then newest. */
  list(limit: number, offset: number): StoredApproval[] {
    return this.sql<[number, number], Row>(`SELECT ${COLUMNS} FROM approvals_requests ORDER BY pending DESC, created_at DESC LIMIT ? OFFSET ?`)
      .all(limit, offset)
      .map(fromRow);
  }

  total(): number {
    return this.sql<[], { n: number }>('SELECT count(*) AS n FROM approvals_requests').get()!.n;
  }

  pendingCount(agentId?: string): number {
    if (agentId)
      return this.sql<[string], { n: number }>("SELECT count(*) AS n FROM approvals_requests WHERE status = 'pending' AND agent_id = ?").get(agentId)!.n;
    return this.sql<[], { n: number }>("SELECT count(*) AS n FROM approvals_requests WHERE status = 'pending'").get()!.n;
  }

  /** Pending requests whose time is up. */
  due(now: string): StoredApproval[] {
    return this.sql<[string], Row>(`SELECT ${COLUMNS} FROM approvals_requests WHERE status = 'pending' AND expires_at <= ?`).all(now).map(fromRow);
  }

  /** Moves a pending request to its decision; false when it was no longer pending (someone decided first). */
  resolve(id: string, status: Exclude<ApprovalStatus, 'pending'>, decidedBy: string, at: string): boolean {
    return (
      this.sql(`UPDATE approvals_requests SET status = ?, decided_by = ?, decided_at = ? WHERE id = ? AND status = 'pending'`).run(status, decidedBy, at, id)
        .changes === 1
    );
  }

  escalate(id: string, expiresAt: string): void {
    this.sql(`UPDATE approvals_requests SET escalations = escalations + 1, expires_at = ? WHERE id = ?`).run(expiresAt, id);
  }

  /** Records a push's outcome; once a human was reached (an escalation may reach one later) it stays true. */
  markNotified(id: string, reached: boolean): void {
    this.sql('UPDATE approvals_requests SET notified = max(coalesce(notified, 0), ?) WHERE id = ?').run(Number(reached), id);
  }

  audit(entry: Omit<AuditEntry, 'id'>): void {
    this.sql(
      'INSERT INTO approvals_audit (request_id, agent_id, action, risk_level, decision, decided_by, at, second_factor_used, reason) VALUES (?,?,?,?,?,?,?,?,?)',
    ).run(
      entry.request_id,
      entry.agent_id,
      entry.action,
      entry.risk_level,
      entry.decision,
      entry.decided_by,
      entry.decided_at,
      entry.second_factor_used ? 1 : 0,
      entry.reason,
    );
  }

  auditPage(filter: { agentId?: string; limit: number; offset: number }): { items: AuditEntry[]; total: number } {
    const where = filter.agentId ? 'WHERE agent_id = ?' : '';
    const args = filter.agentId ? [filter.agentId] : [];
    const items = this.sql<unknown[], Omit<AuditEntry, 'second_factor_used'> & { second_factor_used: number }>(
      `SELECT seq AS id, request_id, agent_id, action, risk_level, decision, decided_by, at AS decided_at, second_factor_used, reason FROM approvals_audit ${where} ORDER BY seq DESC LIMIT ? OFFSET ?`,
    )
      .all(...args, filter.limit, filter.offset)
      .map((r) => ({ ...r, second_factor_used: r.second_factor_used === 1 }));
    const total = this.sql<unknown[], { n: number }>(`SELECT count(*) AS n FROM approvals_audit ${where}`).get(...args)!.n;
    return { items, total };
  }

  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }
}
