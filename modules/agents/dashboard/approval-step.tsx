/**
 * A tool call held for a human decision, in the chat: the step says it waits, with Approve / Reject (and the code
 * field when [approval] second_factor = "totp") right there. The conversation decides through `decide`, which
 * streams the turn the decision resumes; the step updates in place from its outcome (chat-state.tsx, settle).
 */
import { createContext } from 'preact';
import { useContext, useEffect, useState } from 'preact/hooks';
import { api, ErrorText, fmtTime, seg, useHasModule } from '@talon/dashboard-kit';
import type { HeldApproval, Step } from './chat-state.tsx';

export interface Decision {
  approve: boolean;
  totpCode?: string;
}

export interface HeldCalls {
  /** Pending requests of the agent by the call they hold (a reloaded session's steps learn theirs here). */
  pending: Map<string, { id: string; expires_at: string }>;
  needsCode: boolean;
  /** Decides and follows the turn the decision resumes; rejects with the refusal (a bad code) before anything ran. */
  decide(approvalId: string, decision: Decision): Promise<void>;
}

export const HeldCallsContext = createContext<HeldCalls | undefined>(undefined);

interface PendingList {
  approvals: { id: string; expires_at: string; payload: { call_id?: string } }[];
}

/**
 * The agent's pending requests and whether approving needs a code; read again when `version` changes. Without the
 * approvals module nothing is ever held, and nothing is asked.
 */
export function useHeldCalls(agentId: string, version: unknown, decide: HeldCalls['decide']): HeldCalls {
  const [pending, setPending] = useState<HeldCalls['pending']>(new Map());
  const [needsCode, setNeedsCode] = useState(false);
  const approvals = useHasModule('approvals');
  useEffect(() => {
    if (!approvals) return;
    // A failure here leaves the steps as the session has them.
    api<PendingList>(`/api/approvals?agent_id=${seg(agentId)}&status=pending&limit=500`)
      .then((list) => setPending(new Map(list.approvals.flatMap((a) => (a.payload.call_id ? [[a.payload.call_id, a] as const] : [])))))
      .catch(() => undefined);
  }, [approvals, agentId, version]);
  useEffect(() => {
    if (!approvals) return;
    api<{ enforced: boolean }>('/api/approvals/totp/status')
      .then((s) => setNeedsCode(s.enforced))
      .catch(() => undefined);
  }, [approvals]);
  return { pending, needsCode, decide };
}

/** Where the held call stands: from the step (this page saw it), else from the pending requests. */
export function heldState(step: Step, held: HeldCalls | undefined): HeldApproval | undefined {
  const waiting = step.id ? held?.pending.get(step.id) : undefined;
  if (step.approval && step.approval.status !== 'pending') return step.approval;
  if (waiting) return { id: waiting.id, status: 'pending', expiresAt: waiting.expires_at };
  return step.approval;
}

export const heldLabel: Record<HeldApproval['status'], string> = {
  pending: 'waiting for approval',
  approved: 'approved',
  rejected: 'rejected',
  expired: 'expired without a decision',
  skipped: 'skipped without a decision',
  'not run': 'not run',
};

/** Approve / Reject for a pending request, with the code field when approving needs one. */
export function ApprovalControls({ approval }: { approval: HeldApproval }) {
  const held = useContext(HeldCallsContext);
  const [code, setCode] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  if (!held || !approval.id || approval.status !== 'pending') return null;
  const id = approval.id;
  const decide = async (approve: boolean) => {
    setBusy(true);
    setError(undefined);
    try {
      await held.decide(id, { approve, ...(approve && held.needsCode ? { totpCode: code.trim() } : {}) });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const codeId = `approval-code-${id}`;
  return (
    <form
      class="approval-controls"
      aria-label="Decide this tool call"
      onSubmit={(e) => {
        e.preventDefault();
        void decide(true);
      }}
    >
      {approval.expiresAt && <p class="muted">Expires {fmtTime(approval.expiresAt)}.</p>}
      {held.needsCode && (
        <p>
          <label for={codeId}>Authenticator code</label>{' '}
          <input id={codeId} inputMode="numeric" autoComplete="one-time-code" size={8} required value={code} onInput={(e) => setCode(e.currentTarget.value)} />
        </p>
      )}
      <button type="submit" disabled={busy}>
        Approve
      </button>{' '}
      <button type="button" class="danger" disabled={busy} onClick={() => void decide(false)}>
        Reject
      </button>
      <ErrorText error={error} />
    </form>
  );
}
