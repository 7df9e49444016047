/** Pairing codes waiting for the owner (dm_policy = pairing): approve admits the sender from now on, reject drops the code. */
import { api, ConfirmButton, ErrorText, fmtTime, plural, seg, Table, useAction, useApi } from '@talon/dashboard-kit';
import { usePoll } from './channel-parts.tsx';

interface PairingRequest {
  code: string;
  sender_id: string;
  /** The platform's display name: untrusted, shown as text. */
  sender_name: string | null;
  created_at: number;
  expires_at: number;
}

export function PairingCodes({ name }: { name: string }) {
  const base = `/api/channels/${seg(name)}/pairing`;
  const list = useApi<{ requests: PairingRequest[]; total: number }>(base);
  usePoll(list.reload);
  const action = useAction();
  const act = (fn: () => Promise<string>) =>
    void action.run(async () => {
      const done = await fn();
      await list.reload();
      return done;
    });
  const who = (r: PairingRequest) => (r.sender_name ? `${r.sender_name} (${r.sender_id})` : r.sender_id);
  const requests = list.data?.requests ?? [];
  return (
    <div class="card" aria-labelledby="pairing-title">
      <h2 id="pairing-title">Pairing codes</h2>
      <p class="muted">
        {list.data ? `${plural(list.data.total, 'sender')} waiting for approval.` : ''} A sender approved here reaches the agent from then on.
      </p>
      <ErrorText error={list.error ?? action.error} />
      {action.done && <p role="status">{action.done}</p>}
      {requests.length > 0 && (
        <Table columns={['Code', 'Sender', 'Asked', 'Expires', { hidden: 'Actions' }]}>
          {requests.map((r) => (
            <tr>
              <th scope="row">
                <code>{r.code}</code>
              </th>
              <td>{who(r)}</td>
              <td>{fmtTime(new Date(r.created_at).toISOString())}</td>
              <td>{fmtTime(new Date(r.expires_at).toISOString())}</td>
              <td class="inline">
                <button
                  type="button"
                  class="small primary"
                  disabled={action.busy}
                  aria-label={`Approve ${r.code}`}
                  onClick={() => act(async () => (await api(`${base}/${seg(r.code)}/approve`, { json: {} }), `Approved ${who(r)}`))}
                >
                  Approve
                </button>
                <ConfirmButton
                  small
                  label={`Reject ${r.code}`}
                  confirm={`Reject ${r.code} now`}
                  disabled={action.busy}
                  onConfirm={() => act(async () => (await api(`${base}/${seg(r.code)}`, { method: 'DELETE' }), `Rejected ${r.code}`))}
                >
                  Reject
                </ConfirmButton>
              </td>
            </tr>
          ))}
        </Table>
      )}
    </div>
  );
}
