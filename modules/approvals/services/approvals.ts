/**
 * Approval requests: creation (held tool calls and requests made through the API), decisions (one or a batch, all
 * or none), expiry with the configured fallback, and the decision trail. What happens to a held tool call after the
 * decision is the resumer's job (gate.ts), run by the process whose agent asked: several processes may share the
 * requests, and any of them may decide; the owner hears the decision through the change feed.
 */
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import { conflict, HttpError, lockInTransaction, notFound, tooManyRequests, type EventChannel, type Queries } from '@talon/module-sdk';
import type { ApprovalDecision, approvalEvents, ApprovalRecord, ApprovalService, ApprovalStatus } from '@talon/approvals';
import type { ApprovalConfig } from '../config.ts';
import { riskOf } from './policy.ts';
import type { NoticeOutcome, Notify } from './notify.ts';
import type { ApprovalStore, Ending, HeldCall, StoredApproval } from './store.ts';
import type { Totp } from './totp.ts';

export interface NewApproval {
  agent: { id: string; name: string };
  action: string;
  description: string;
  payload: Record<string, unknown>;
  held?: HeldCall;
}

/** Told about every final outcome of a held call this process owns (the resumer runs or refuses it). */
export type Outcome = (approval: StoredApproval, how: Ending) => void;

/** A new request, and the outcome of telling the humans about it (never rejects). */
export interface Created {
  approval: StoredApproval;
  notice: Promise<NoticeOutcome>;
  /** The same held call was already pending: this is that request, and nobody was asked again. */
  repeated?: boolean;
}

export interface BatchItem {
  id: string;
  status: 'ok' | 'error';
  decision?: ApprovalStatus;
  decided_at?: string | null;
  error?: string;
}

/** The change-feed topic of the requests: key = request id. */
export const REQUESTS_TOPIC = 'requests';

/** The record as the API shows it (the held call stays internal: it is in payload already). */
export const view = ({ escalations: _e, held: _h, node: _n, ...record }: StoredApproval): ApprovalRecord => record;

export interface ApprovalsDeps {
  store: ApprovalStore;
  totp: Totp;
  config: () => ApprovalConfig;
  events: EventChannel<typeof approvalEvents>;
  notify: Notify;
  onOutcome: Outcome;
  log: Logger;
  /** This process's node id: the owner of the held calls its agents make. */
  node: string;
  /** Notes a change of a request for the other processes, inside the writing transaction. */
  noteChange: (t: Queries, id: string) => Promise<void>;
}

export class Approvals implements ApprovalService {
  /** Pending requests (id → agent), here and in the other processes: counted per request, so kept in memory. */
  private readonly pending = new Map<string, string>();
  private sweeping = false;

  constructor(private readonly deps: ApprovalsDeps) {}

  /** Reads the pending requests (start). */
  async load(): Promise<void> {
    this.pending.clear();
    for (const row of await this.deps.store.pending()) this.pending.set(row.id, row.agent_id);
  }

  async get(id: string): Promise<ApprovalRecord | undefined> {
    const a = await this.deps.store.get(id);
    return a && view(a);
  }

  pendingCount(agentId?: string): number {
    if (agentId === undefined) return this.pending.size;
    let n = 0;
    for (const agent of this.pending.values()) if (agent === agentId) n++;
    return n;
  }

  async create(input: NewApproval): Promise<Created> {
    const config = this.deps.config();
    const now = Date.now();
    const approval: StoredApproval = {
      id: randomUUID(),
      agent_id: input.agent.id,
      agent_name: input.agent.name,
      action: input.action,
      description: input.description,
      payload: input.payload,
      risk_level: riskOf(config, input.action),
      status: 'pending',
      created_at: new Date(now).toISOString(),
      decided_at: null,
      decided_by: null,
      expires_at: new Date(now + config.timeout_secs * 1000).toISOString(),
      escalations: 0,
      held: input.held,
      notified: null,
      node: input.held ? this.deps.node : null,
    };
    // Looked up in the writing transaction: another process may hold the same call meanwhile. A repeat is not a new
    // request, so it does not count against the cap.
    const existing = await this.deps.store.tx(async (t) => {
      // PostgreSQL runs transactions side by side: the agent's requests are looked up and written one transaction at a
      // time (SQLite runs one writing transaction at a time anyway).
      await lockInTransaction(t, `approvals:agent:${input.agent.id}`);
      const same = await this.pendingSame(t, input);
      if (same) return same;
      if (this.pendingCount(input.agent.id) >= config.max_pending_per_agent) {
        throw tooManyRequests(
          `agent '${input.agent.name}' already has ${config.max_pending_per_agent} pending approvals ([approval] max_pending_per_agent)`,
          10,
        );
      }
      await this.deps.store.insert(t, approval);
      await this.trail(t, approval, 'requested', null, false);
      await this.deps.noteChange(t, approval.id);
      return undefined;
    });
    if (existing) return repeated(existing);
    this.pending.set(approval.id, approval.agent_id);
    return { approval, notice: this.announce(approval, approval.description) };
  }

  /**
   * The pending request of the same held call (same agent, session, tool and input), if any: a model that asks
   * again while its call waits joins that request instead of raising a second one.
   */
  private async pendingSame(on: Queries, input: NewApproval): Promise<StoredApproval | undefined> {
    const held = input.held;
    if (!held) return undefined;
    const candidates = await this.deps.store.pendingHeld(on, input.agent.id, held.tool);
    return candidates.find((a) => a.held?.session_id === held.session_id && isDeepStrictEqual(a.held.input, held.input));
  }

  async decide(id: string, decision: ApprovalDecision): Promise<ApprovalRecord> {
    const approval = await this.pendingOrThrow(id);
    const factor = await this.secondFactor(decision);
    const status = decision.approve ? 'approved' : 'rejected';
    const at = new Date().toISOString();
    const moved = await this.deps.store.tx(async (t) => {
      if (!(await this.deps.store.resolve(t, id, status, decision.decidedBy, at, status))) return false;
      await this.trail(t, approval, status, decision.decidedBy, factor, decision.reason);
      await this.deps.noteChange(t, id);
      return true;
    });
    if (!moved) throw conflict(`approval '${id}' was already decided`);
    return this.finish(approval, status, decision.decidedBy, at);
  }

  /** All or none: every id must be pending; otherwise nothing changes and each refusal is named. */
  async batch(ids: string[], decision: ApprovalDecision): Promise<BatchItem[]> {
    const unique = [...new Set(ids)];
    const found = await Promise.all(unique.map(async (id) => ({ id, approval: await this.deps.store.get(id) })));
    const problems = found.map(({ id, approval }) => ({ id, error: refusal(approval) }));
    if (problems.some((p) => p.error)) {
      const results = problems.map((p): BatchItem => (p.error ? { id: p.id, status: 'error', error: p.error } : { id: p.id, status: 'ok' }));
      throw new HttpError(
        409,
        'batch refused, nothing was decided: ' +
          problems
            .filter((p) => p.error)
            .map((p) => `${p.id}: ${p.error}`)
            .join('; '),
        { extra: { results } },
      );
    }
    const factor = await this.secondFactor(decision);
    const status = decision.approve ? 'approved' : 'rejected';
    const at = new Date().toISOString();
    const approvals = found.map((f) => f.approval!);
    await this.deps.store.tx(async (t) => {
      for (const a of approvals) {
        if (!(await this.deps.store.resolve(t, a.id, status, decision.decidedBy, at, status)))
          throw conflict(`approval '${a.id}' was decided meanwhile; nothing was decided`);
        await this.trail(t, a, status, decision.decidedBy, factor, decision.reason);
        await this.deps.noteChange(t, a.id);
      }
    });
    return approvals.map((a) => {
      this.finish(a, status, decision.decidedBy, at);
      return { id: a.id, status: 'ok', decision: status, decided_at: at };
    });
  }

  /**
   * Pending requests whose time is up: expired (deny, skip) or escalated. Every process sweeps; each step is a
   * conditional update, so one of them expires or escalates a request, once.
   */
  async sweep(): Promise<void> {
    if (this.sweeping || !this.pending.size) return;
    this.sweeping = true;
    try {
      for (const a of await this.deps.store.due(new Date().toISOString())) await this.timeUp(a);
    } finally {
      this.sweeping = false;
    }
  }

  /** A request another process changed: the pending count follows, and a decided held call of this node resumes. */
  async heard(id: string): Promise<void> {
    const a = await this.deps.store.get(id);
    if (a?.status === 'pending') this.pending.set(id, a.agent_id);
    else this.pending.delete(id);
    if (a && a.status !== 'pending' && a.held && a.node === this.deps.node) await this.resume(id);
  }

  /**
   * Takes over the held calls of a dead node (or, at start, of every node not live, and those this node missed)
   * and resumes the ones already decided.
   */
  async adopt(from: { dead: string } | { notLive: readonly string[] }): Promise<void> {
    const decided = await this.deps.store.adopt(this.deps.node, from);
    if ('notLive' in from) decided.push(...(await this.deps.store.unresumed(this.deps.node)));
    for (const id of new Set(decided)) await this.resume(id);
  }

  private async timeUp(a: StoredApproval): Promise<void> {
    const config = this.deps.config();
    if (config.timeout_fallback === 'escalate' && a.escalations < config.max_escalations) {
      const expires = new Date(Date.now() + config.escalate_extra_secs * 1000).toISOString();
      const escalated = await this.deps.store.tx(async (t) => {
        if (!(await this.deps.store.escalate(t, a, expires))) return false;
        await this.trail(t, a, 'escalated', 'timeout', false);
        await this.deps.noteChange(t, a.id);
        return true;
      });
      if (escalated) void this.announce(a, `[escalation ${a.escalations + 1}] ${a.description}`);
      return;
    }
    const at = new Date().toISOString();
    const how = config.timeout_fallback === 'skip' ? 'skipped' : 'expired';
    const moved = await this.deps.store.tx(async (t) => {
      if (!(await this.deps.store.resolve(t, a.id, 'expired', 'timeout', at, how))) return false;
      await this.trail(t, a, how, 'timeout', false);
      await this.deps.noteChange(t, a.id);
      return true;
    });
    if (moved) this.finish(a, 'expired', 'timeout', at);
  }

  /** Publishes the request (SSE, webhooks) and pushes it to the owners; records and logs whether anyone was reached. */
  private async announce(a: StoredApproval, description: string): Promise<NoticeOutcome> {
    this.deps.events.publish('approval.requested', { approvalId: a.id, agentId: a.agent_id, tool: a.action, description });
    const outcome = await this.deps
      .notify({ approvalId: a.id, description })
      .catch((err: Error): NoticeOutcome => ({ notified: false, sent: 0, failed: 0, reason: `the push failed: ${err.message}` }));
    try {
      await this.deps.store.markNotified(a.id, outcome.notified);
    } catch (err) {
      this.deps.log.warn({ err, approvalId: a.id }, 'could not record whether an approval request reached anyone');
    }
    if (outcome.notified) this.deps.log.debug({ approvalId: a.id, ...outcome }, 'approval request pushed to paired devices');
    else this.deps.log.warn({ approvalId: a.id, ...outcome }, 'approval request reached no human; it waits in the inbox');
    return outcome;
  }

  /** After a decision this process made: the event, and the held call's resumption when it is this node's. */
  private finish(a: StoredApproval, status: Exclude<ApprovalStatus, 'pending'>, by: string, at: string): ApprovalRecord {
    const decided = { ...a, status, decided_by: by, decided_at: at };
    this.pending.delete(a.id);
    this.deps.events.publish('approval.resolved', { approvalId: a.id, status, decidedBy: by });
    if (a.held && a.node === this.deps.node) void this.resume(a.id);
    return view(decided);
  }

  /** Resumes a decided held call of this node, once (the claim is a conditional update). */
  private async resume(id: string): Promise<void> {
    try {
      const claimed = await this.deps.store.claimResume(id, this.deps.node);
      if (claimed) this.deps.onOutcome(claimed.approval, claimed.outcome);
    } catch (err) {
      this.deps.log.warn({ err, approvalId: id }, 'could not resume the agent after an approval decision');
    }
  }

  private async secondFactor(decision: ApprovalDecision): Promise<boolean> {
    if (!decision.approve || this.deps.config().second_factor !== 'totp') return false;
    await this.deps.totp.verifyForApproval(decision.totpCode);
    return true;
  }

  private async pendingOrThrow(id: string): Promise<StoredApproval> {
    const approval = await this.deps.store.get(id);
    if (!approval) throw notFound(`approval '${id}' not found`);
    if (approval.status !== 'pending') throw conflict(`approval '${id}' is already ${approval.status}`);
    return approval;
  }

  private trail(t: Queries, a: StoredApproval, decision: string, by: string | null, factor: boolean, reason?: string): Promise<void> {
    return this.deps.store.audit(t, {
      request_id: a.id,
      agent_id: a.agent_id,
      action: a.action,
      risk_level: a.risk_level,
      decision,
      decided_by: by,
      decided_at: new Date().toISOString(),
      second_factor_used: factor,
      reason: reason ?? null,
    });
  }
}

/** A repeated held call: the pending request it joins; the humans were told (or not) when it was made. */
function repeated(approval: StoredApproval): Created {
  const notified = approval.notified === true;
  const notice: NoticeOutcome = { notified, sent: 0, failed: 0, ...(notified ? {} : { reason: 'no push reached anyone when the request was made' }) };
  return { approval, notice: Promise.resolve(notice), repeated: true };
}

function refusal(approval: StoredApproval | undefined): string | undefined {
  if (!approval) return 'not found';
  return approval.status === 'pending' ? undefined : `already ${approval.status}`;
}
