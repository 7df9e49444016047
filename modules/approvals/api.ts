/**
 * Contract of the approvals module (`@talon/approvals`): human approvals of agent actions. Other front doors
 * (a chat channel's /approve command, the dashboard) decide through this service so every path checks the same
 * second factor and leaves the same decision trail.
 */
import { defineEvents, payload, serviceRef } from '@talon/module-sdk';

/** pending → approved | rejected | expired (timed out; see the [approval] timeout_fallback). */
export type ApprovalStatus = 'pending' | 'approved' | 'rejected' | 'expired';
export type RiskLevel = 'low' | 'medium' | 'high' | 'critical';

export interface ApprovalRecord {
  id: string;
  agent_id: string;
  agent_name: string;
  action: string;
  description: string;
  payload: Record<string, unknown>;
  risk_level: RiskLevel;
  status: ApprovalStatus;
  created_at: string;
  decided_at: string | null;
  decided_by: string | null;
  expires_at: string;
  /**
   * Whether a human was told about the request: true once a push reached at least one paired device, false when it
   * reached nobody (no device, push off, every push failed), null while the push is under way.
   */
  notified: boolean | null;
}

export interface ApprovalDecision {
  approve: boolean;
  /** Who decided ('api', 'channel:<name>:<user>'...), for the trail. */
  decidedBy: string;
  /** Required (and checked) when [approval] second_factor = "totp" and approve is true. */
  totpCode?: string;
  /** Why (rejections), kept in the trail. */
  reason?: string;
}

export interface ApprovalService {
  get(id: string): Promise<ApprovalRecord | undefined>;
  /** Pending requests of every process sharing the home (kept in memory: cheap to ask). */
  pendingCount(): number;
  /** Throws HttpError: 404 unknown, 409 already decided, 400 second factor missing or invalid. */
  decide(id: string, decision: ApprovalDecision): Promise<ApprovalRecord>;
}

export const approvalService = serviceRef<ApprovalService>('approvals.service');

export const approvalEvents = defineEvents('approvals', {
  'approval.requested': payload<{ approvalId: string; agentId?: string; tool?: string; description?: string }>(),
  'approval.resolved': payload<{ approvalId: string; status: string; decidedBy?: string }>(),
});
