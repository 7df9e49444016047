/**
 * The approvals inbox: pending requests first, approve or reject; with the TOTP second factor on, approving takes a
 * code from the authenticator. Enrollment (QR code, recovery codes shown once, confirm) is on the same page.
 * New requests and decisions made elsewhere arrive live from GET /api/approvals/stream.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ErrorText, fmtJson, fmtTime, Pager, readSse, refreshBadges, request, seg, useAction, useApi, useServerPage } from '@talon/dashboard-kit';

interface Approval {
  id: string;
  agent_name?: string | null;
  agent_id: string;
  action: string;
  description: string;
  payload: unknown;
  risk_level: string;
  status: string;
  created_at: string;
  expires_at: string;
  decided_by?: string | null;
  /** Whether a push reached an owner's device: null while it is under way. */
  notified?: boolean | null;
}
interface TotpStatus {
  enrolled: boolean;
  confirmed: boolean;
  enforced: boolean;
  remaining_recovery_codes: number;
}

export default function ApprovalsView() {
  const list = useServerPage<{ approvals: Approval[]; total: number }, Approval>('/api/approvals', (d) => ({ items: d.approvals, total: d.total }), 25);
  const totp = useApi<TotpStatus>('/api/approvals/totp/status');
  useApprovalEvents(() => void list.reload());
  return (
    <section>
      <h1>Approvals</h1>
      <ErrorText error={list.error ?? totp.error} />
      {totp.data?.enforced && <p>Approving needs a code from the enrolled authenticator app (second factor: TOTP).</p>}
      {list.data && !list.items.length && <p>Nothing waits for a decision.</p>}
      <ul class="cards">
        {list.items.map((a) => (
          <ApprovalCard
            key={a.id}
            a={a}
            needsCode={Boolean(totp.data?.enforced)}
            onDecided={() => {
              void list.reload();
              refreshBadges();
            }}
          />
        ))}
      </ul>
      <Pager {...list} label="requests" />
      {totp.data && <Enrollment status={totp.data} onChanged={() => void totp.reload()} />}
    </section>
  );
}

/** Calls back on every approval.requested / approval.resolved event while the view is open. */
function useApprovalEvents(onEvent: () => void): void {
  useEffect(() => {
    const controller = new AbortController();
    request('/api/approvals/stream', { signal: controller.signal })
      .then((res) => readSse(res, (e) => e.event.startsWith('approval.') && onEvent()))
      // The list still works without live updates (a reload shows them); an aborted stream is the view closing.
      .catch(() => undefined);
    return () => controller.abort();
  }, []);
}

function ApprovalCard({ a, needsCode, onDecided }: { a: Approval; needsCode: boolean; onDecided: () => void }) {
  const [code, setCode] = useState('');
  const action = useAction();
  const decide = (verb: 'approve' | 'reject') =>
    void action.run(async () => {
      const body = verb === 'approve' ? (code ? { totp_code: code } : {}) : {};
      await api(`/api/approvals/${seg(a.id)}/${verb}`, { json: body });
      onDecided();
      return verb === 'approve' ? 'Approved' : 'Rejected';
    });
  const pending = a.status === 'pending';
  return (
    <li class="card">
      <h2>
        {a.action} <span class={`badge ${pending ? '' : 'off'}`}>{a.status}</span> <span class="badge">risk {a.risk_level}</span>
      </h2>
      <p>
        Asked by {a.agent_name ?? a.agent_id} at {fmtTime(a.created_at)}
        {pending && <> · expires {fmtTime(a.expires_at)}</>}
      </p>
      {pending && a.notified === false && <p class="warn">No paired device was reached: this request waits only here until it expires.</p>}
      {a.description && <p>{a.description}</p>}
      <details>
        <summary>Details</summary>
        <pre>{fmtJson(a.payload)}</pre>
      </details>
      {pending && (
        <form
          class="inline"
          onSubmit={(e) => {
            e.preventDefault();
            decide('approve');
          }}
        >
          {needsCode && (
            <>
              <label for={`code-${a.id}`}>Authenticator code</label>
              <input id={`code-${a.id}`} inputMode="numeric" autocomplete="one-time-code" value={code} onInput={(e) => setCode(e.currentTarget.value)} />
            </>
          )}
          <button type="submit" class="primary" disabled={action.busy}>
            Approve
          </button>
          <button type="button" class="danger" disabled={action.busy} onClick={() => decide('reject')}>
            Reject
          </button>
        </form>
      )}
      {action.done && <p role="status">{action.done}</p>}
      <ErrorText error={action.error} />
    </li>
  );
}

function Enrollment({ status, onChanged }: { status: TotpStatus; onChanged: () => void }) {
  const [setup, setSetup] = useState<{ qr_code: string; secret: string; recovery_codes: string[] }>();
  const [code, setCode] = useState('');
  const action = useAction();
  return (
    <div class="card">
      <h2>Second factor (TOTP)</h2>
      <p>
        {status.confirmed
          ? `Enrolled; ${status.remaining_recovery_codes} recovery codes left.`
          : status.enrolled
            ? 'Enrollment started, not yet confirmed.'
            : 'Not enrolled.'}{' '}
        {status.enforced ? 'Approvals require a code.' : 'Approvals do not require a code ([approval] second_factor = "none").'}
      </p>
      {!status.confirmed && (
        <button
          type="button"
          disabled={action.busy}
          onClick={() => void action.run(async () => setSetup(await api('/api/approvals/totp/setup', { json: {} })))}
        >
          {status.enrolled ? 'Start again' : 'Enroll an authenticator'}
        </button>
      )}
      {setup && (
        <div>
          <p>Scan the code with an authenticator app (or type the secret), and keep the recovery codes: they are shown once.</p>
          <img src={setup.qr_code} alt="QR code of the TOTP secret" width={180} height={180} />
          <p>
            Secret: <code>{setup.secret}</code>
          </p>
          <p>
            Recovery codes: <code>{setup.recovery_codes.join(' ')}</code>
          </p>
        </div>
      )}
      {status.enrolled && !status.confirmed && (
        <form
          class="inline"
          onSubmit={action.submit(async () => {
            await api('/api/approvals/totp/confirm', { json: { code } });
            setSetup(undefined);
            onChanged();
            return 'Enrollment confirmed';
          })}
        >
          <label for="totp-confirm">Code from the app</label>
          <input id="totp-confirm" inputMode="numeric" autocomplete="one-time-code" value={code} onInput={(e) => setCode(e.currentTarget.value)} />
          <button type="submit">Confirm</button>
        </form>
      )}
      {action.done && <p role="status">{action.done}</p>}
      <ErrorText error={action.error} />
    </div>
  );
}
