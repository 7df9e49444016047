/**
 * Approval requests: creation (held tool calls and requests made through the API), decisions (one or a batch, all
 * or none), expiry with the configured fallback, and the decision trail. What happens to a held tool call after the
 * decision is the resumer's job (resume.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { conflict, HttpError, notFound, tooManyRequests, type EventAccess } from '@talon/module-sdk';
import type { ApprovalDecision, ApprovalRecord, ApprovalService, ApprovalStatus } from '@talon/approvals';
import type { ApprovalConfig } from '../config.ts';
import { riskOf } from './policy.ts';
import type { NoticeOutcome, Notify } from './notify.ts';
import type { ApprovalStore, HeldCall, StoredApproval } from './store.ts';
import type { Totp } from './totp.ts';

export interface NewApproval {
  agent: { id: string; name: string };
  action: string;
  description: string;
  payload: Record<string, unknown>;
  held?: HeldCall;
}

/** Told about every final outcome (the resumer runs or refuses the held call). */
export type Outcome = (approval: StoredApproval, how: 'approved' | 'rejected' | 'expired' | 'skipped') => void;

/** A new request, and the outcome of telling the humans about it (never rejects). */
export interface Created {
  approval: StoredApproval;
  notice: Promise<NoticeOutcome>;
}

export interface BatchItem {
  id: string;
  status: 'ok' | 'error';
  decision?: ApprovalStatus;
  decided_at?: string | null;
  error?: string;
}

/** The record as the API shows it (the held call stays internal: it is in payload already). */
export const view = ({ escalations: _e, held: _h, ...record }: StoredApproval): ApprovalRecord => record;

export class Approvals implements ApprovalService {
  constructor(
    private readonly deps: {
      store: ApprovalStore;
      totp: Totp;
      config: () => ApprovalConfig;
      events: EventAccess;
      notify: Notify;
      onOutcome: Outcome;
      log: Logger;
    },
  ) {}

  get(id: string): ApprovalRecord | undefined {
    const a = this.deps.store.get(id);
    return a && view(a);
  }

  pendingCount(): number {
    return this.deps.store.pendingCount();
  }

  create(input: NewApproval): Created {
    const config = this.deps.config();
    if (this.deps.store.pendingCount(input.agent.id) >= config.max_pending_per_agent) {
      throw tooManyRequests(`agent '${input.agent.name}' already has ${config.max_pending_per_agent} pending approvals ([approval] max_pending_per_agent)`, 10);
    }
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
    };
    this.deps.store.transaction(() => {
      this.deps.store.insert(approval);
      this.trail(approval, 'requested', null, false);
    });
    return { approval, notice: this.announce(approval, approval.description) };
  }

  async decide(id: string, decision: ApprovalDecision): Promise<ApprovalRecord> {
    const approval = this.pendingOrThrow(id);
    const factor = await this.secondFactor(decision);
    const status = decision.approve ? 'approved' : 'rejected';
    const at = new Date().toISOString();
    const moved = this.deps.store.transaction(() => {
      if (!this.deps.store.resolve(id, status, decision.decidedBy, at)) return false;
      this.trail(approval, status, decision.decidedBy, factor, decision.reason);
      return true;
    });
    if (!moved) throw conflict(`approval '${id}' was already decided`);
    return this.finish(approval, status, decision.decidedBy, at);
  }

  /** All or none: every id must be pending; otherwise nothing changes and each refusal is named. */
  async batch(ids: string[], decision: ApprovalDecision): Promise<BatchItem[]> {
    const unique = [...new Set(ids)];
    const problems = unique.map((id) => ({ id, error: this.refusal(id) }));
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
    const approvals = unique.map((id) => this.deps.store.get(id)!);
    const moved = this.deps.store.transaction(() => {
      for (const a of approvals) {
        if (!this.deps.store.resolve(a.id, status, decision.decidedBy, at)) throw conflict(`approval '${a.id}' was decided meanwhile; nothing was decided`);
        this.trail(a, status, decision.decidedBy, factor, decision.reason);
      }
      return approvals;
    });
    return moved.map((a) => {
      this.finish(a, status, decision.decidedBy, at);
      return { id: a.id, status: 'ok', decision: status, decided_at: at };
    });
  }

  /** Pending requests whose time is up: expired (deny, skip) or escalated. */
  sweep(): void {
    const config = this.deps.config();
    for (const a of this.deps.store.due(new Date().toISOString())) {
      if (config.timeout_fallback === 'escalate' && a.escalations < config.max_escalations) {
        this.deps.store.escalate(a.id, new Date(Date.now() + config.escalate_extra_secs * 1000).toISOString());
        this.trail(a, 'escalated', 'timeout', false);
        void this.announce(a, `[escalation ${a.escalations + 1}] ${a.description}`);
        continue;
      }
      const at = new Date().toISOString();
      if (!this.deps.store.resolve(a.id, 'expired', 'timeout', at)) continue;
      const how = config.timeout_fallback === 'skip' ? 'skipped' : 'expired';
      this.trail(a, how, 'timeout', false);
      this.finish(a, 'expired', 'timeout', at, how);
    }
  }

  /** Publishes the request (SSE, webhooks) and pushes it to the owners; records and logs whether anyone was reached. */
  private async announce(a: StoredApproval, description: string): Promise<NoticeOutcome> {
    this.deps.events.publish('approval.requested', { approvalId: a.id, agentId: a.agent_id, tool: a.action, description });
    const outcome = await this.deps
      .notify({ approvalId: a.id, description })
      .catch((err: Error): NoticeOutcome => ({ notified: false, sent: 0, failed: 0, reason: `the push failed: ${err.message}` }));
    try {
      this.deps.store.markNotified(a.id, outcome.notified);
    } catch (err) {
      this.deps.log.warn({ err, approvalId: a.id }, 'could not record whether an approval request reached anyone');
    }
    if (outcome.notified) this.deps.log.debug({ approvalId: a.id, ...outcome }, 'approval request pushed to paired devices');
    else this.deps.log.warn({ approvalId: a.id, ...outcome }, 'approval request reached no human; it waits in the inbox');
    return outcome;
  }

  private finish(a: StoredApproval, status: Exclude<ApprovalStatus, 'pending'>, by: string, at: string, how: Parameters<Outcome>[1] = status): ApprovalRecord {
    const decided = { ...a, status, decided_by: by, decided_at: at };
    this.deps.events.publish('approval.resolved', { approvalId: a.id, status, decidedBy: by });
    this.deps.onOutcome(decided, how);
    return view(decided);
  }

  private async secondFactor(decision: ApprovalDecision): Promise<boolean> {
    if (!decision.approve || this.deps.config().second_factor !== 'totp') return false;
    await this.deps.totp.verifyForApproval(decision.totpCode);
    return true;
  }

  private pendingOrThrow(id: string): StoredApproval {
    const approval = this.deps.store.get(id);
    if (!approval) throw notFound(`approval '${id}' not found`);
    if (approval.status !== 'pending') throw conflict(`approval '${id}' is already ${approval.status}`);
    return approval;
  }

  private refusal(id: string): string | undefined {
    const approval = this.deps.store.get(id);
    if (!approval) return 'not found';
    return approval.status === 'pending' ? undefined : `already ${approval.status}`;
  }

  private trail(a: StoredApproval, decision: string, by: string | null, factor: boolean, reason?: string): void {
    this.deps.store.audit({
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
