/**
 * Paired devices: pair a new one (a single-use code and its QR code, an image the service draws; the list is read
 * again every few seconds while the code is valid, so the new device appears), the paired devices, revoke one (asked
 * in two steps; its token stops working at once), and a test notification to all of them.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ErrorText, fmtTime, Pager, plural, seg, Table, useAction, useApi, usePage } from '@talon/dashboard-kit';

interface Device {
  id: string;
  display_name: string;
  platform: string;
  paired_at: string;
  last_seen: string | null;
  push: boolean;
}
interface PairingCode {
  pairing_code: string;
  expires_at: string;
  qr_uri: string;
  qr_code: string;
}
interface Notified {
  sent: number;
  failed: number;
  devices: number;
}

/** While a code is shown, the devices are read again this often. */
const POLL_MS = 3000;

export default function PairingView() {
  const list = useApi<{ devices: Device[] }>('/api/pairing/devices');
  const page = usePage(list.data?.devices ?? [], 50);
  const action = useAction();
  const [code, setCode] = useState<PairingCode | undefined>();
  const [revoking, setRevoking] = useState<string | null>(null);
  useEffect(() => {
    if (!code) return;
    const timer = setInterval(() => {
      if (Date.parse(code.expires_at) <= Date.now()) setCode(undefined);
      else void list.reload();
    }, POLL_MS);
    return () => clearInterval(timer);
  }, [code, list.reload]);
  const act = (fn: () => Promise<string>) =>
    void action.run(async () => {
      const done = await fn();
      await list.reload();
      return done;
    });
  const pair = () =>
    void action.run(async () => {
      setCode(await api<PairingCode>('/api/pairing/request', { json: {} }));
    });
  const notify = () =>
    act(async () => {
      const r = await api<Notified>('/api/pairing/notify', { json: { message: 'A test notification from the dashboard' } });
      return `Notification sent to ${r.sent} of ${plural(r.devices, 'device')}${r.failed ? ` (${r.failed} failed)` : ''}`;
    });
  return (
    <section>
      <h1>Paired devices</h1>
      <p class="muted">A paired phone gets its own token (user role) and push notifications, e.g. of approvals waiting.</p>
      <div class="toolbar">
        <button type="button" class="primary" disabled={action.busy} onClick={pair}>
          Pair a device
        </button>
        <button type="button" disabled={action.busy || !list.data?.devices.length} onClick={notify}>
          Send a test notification
        </button>
        {action.done && <span role="status">{action.done}</span>}
      </div>
      <ErrorText error={list.error ?? action.error} />
      {code && (
        <div class="card" aria-labelledby="pairing-code-title">
          <h2 id="pairing-code-title">Scan this code with the device</h2>
          <img src={code.qr_code} alt={`QR code for pairing code ${code.pairing_code}`} width={220} height={220} />
          <p>
            Or enter the code <code>{code.pairing_code}</code> on the device. It works once, until {fmtTime(code.expires_at)}.
          </p>
          <button type="button" onClick={() => setCode(undefined)}>
            Done
          </button>
        </div>
      )}
      <Table columns={['Device', 'Platform', 'Paired', 'Last seen', 'Push', { hidden: 'Actions' }]}>
        {page.items.map((d) => (
          <tr>
            <th scope="row">{d.display_name}</th>
            <td>{d.platform}</td>
            <td>{fmtTime(d.paired_at)}</td>
            <td>{d.last_seen ? fmtTime(d.last_seen) : 'never'}</td>
            <td>{d.push ? 'yes' : 'no'}</td>
            <td class="inline">
              {revoking === d.id ? (
                <span role="group" aria-label={`Confirm revoking ${d.display_name}`}>
                  <button
                    type="button"
                    class="small danger"
                    disabled={action.busy}
                    onClick={() => {
                      setRevoking(null);
                      act(async () => (await api(`/api/pairing/devices/${seg(d.id)}`, { method: 'DELETE' }), `Revoked ${d.display_name}`));
                    }}
                  >
                    Revoke {d.display_name} now
                  </button>
                  <button type="button" class="small" onClick={() => setRevoking(null)}>
                    Keep it
                  </button>
                </span>
              ) : (
                <button type="button" class="small danger" aria-label={`Revoke ${d.display_name}`} onClick={() => setRevoking(d.id)}>
                  Revoke
                </button>
              )}
            </td>
          </tr>
        ))}
      </Table>
      <Pager {...page} label="devices" />
    </section>
  );
}
