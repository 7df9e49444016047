/** Pairing codes waiting for the owner (dm_policy = pairing): approve admits the sender from now on, reject drops the code. */
import { api, ConfirmButton, fmtTime, plural, seg, Table } from '@talon/dashboard-kit';
import { ActionStatus, usePolledCard, type useReloadingAction } from './channel-parts.tsx';

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
  const { list, action } = usePolledCard<{ requests: PairingRequest[]; total: number }>(base);
  const requests = list.data?.requests ?? [];
  return (
    <div class="card" aria-labelledby="pairing-title">
      <h2 id="pairing-title">Pairing codes</h2>
      <p class="muted">
        {list.data ? `${plural(list.data.total, 'sender')} waiting for approval.` : ''} A sender approved here reaches the agent from then on.
      </p>
      <ActionStatus action={action} error={list.error} />
      {requests.length > 0 && (
        <Table columns={['Code', 'Sender', 'Asked', 'Expires', { hidden: 'Actions' }]}>
          {requests.map((r) => (
            <PairingRow request={r} base={base} action={action} />
          ))}
        </Table>
      )}
    </div>
  );
}

/** One code, with its Approve and Reject. */
function PairingRow({ request: r, base, action }: { request: PairingRequest; base: string; action: ReturnType<typeof useReloadingAction> }) {
  const who = r.sender_name ? `${r.sender_name} (${r.sender_id})` : r.sender_id;
  return (
    <tr>
      <th scope="row">
        <code>{r.code}</code>
      </th>
      <td>{who}</td>
      <td>{fmtTime(new Date(r.created_at).toISOString())}</td>
      <td>{fmtTime(new Date(r.expires_at).toISOString())}</td>
      <td class="inline">
        <button
          type="button"
          class="small primary"
          disabled={action.busy}
          aria-label={`Approve ${r.code}`}
          onClick={() => action.act(async () => (await api(`${base}/${seg(r.code)}/approve`, { json: {} }), `Approved ${who}`))}
        >
          Approve
        </button>
        <ConfirmButton
          small
          label={`Reject ${r.code}`}
          confirm={`Reject ${r.code} now`}
          disabled={action.busy}
          onConfirm={() => action.act(async () => (await api(`${base}/${seg(r.code)}`, { method: 'DELETE' }), `Rejected ${r.code}`))}
        >
          Reject
        </ConfirmButton>
      </td>
    </tr>
  );
}
