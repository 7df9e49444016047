/**
 * Peers: this node (id, name, where it listens, its identity's fingerprint, traffic), the addresses it dials with the
 * state of each link, the peers that passed the handshake, and adding or removing an address of `[peers] connect`
 * (POST /api/config/set, so the change is kept in config.toml; the module dials or drops it at once). The state is
 * read again every few seconds.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ErrorText, fmtInt, fmtTime, Table, useAction, useApi, useHasModule } from '@talon/dashboard-kit';

interface Status {
  enabled: boolean;
  node_id: string | null;
  node_name: string | null;
  listen_address: string | null;
  identity_fingerprint: string | null;
  connect: Array<{ address: string; state: 'connected' | 'connecting'; node_id: string | null }>;
  connected_peers: number;
  total_peers: number;
  messages: { sent: number; received: number; last_minute: number };
}
interface Peer {
  node_id: string;
  node_name: string;
  address: string;
  state: string;
  authenticated: boolean;
  last_seen: string | null;
  agents: Array<{ id: string; name: string }>;
}

const REFRESH_MS = 5000;

export default function PeersView() {
  const status = useApi<Status>('/api/network/status');
  const peers = useApi<{ peers: Peer[] }>('/api/peers');
  const canEdit = useHasModule('config-api');
  const action = useAction();
  const [address, setAddress] = useState('');
  const [removing, setRemoving] = useState<string | null>(null);
  useEffect(() => {
    const timer = setInterval(() => void Promise.all([status.reload(), peers.reload()]), REFRESH_MS);
    return () => clearInterval(timer);
  }, [status.reload, peers.reload]);
  const s = status.data;
  const setConnect = async (next: string[], done: string) => {
    await api('/api/config/set', { json: { path: 'peers.connect', value: next } });
    await Promise.all([status.reload(), peers.reload()]);
    return done;
  };
  const add = action.submit(async () => {
    const a = address.trim();
    const done = await setConnect([...(s?.connect.map((c) => c.address) ?? []), a], `Added ${a}: dialling it`);
    setAddress('');
    return done;
  });
  return (
    <section>
      <h1>Peers</h1>
      <ErrorText error={status.error ?? peers.error ?? action.error} />
      {action.done && <p role="status">{action.done}</p>}
      {s && (
        <dl class="stats">
          <div>
            <dt>This node</dt>
            <dd>
              {s.node_name ?? '—'} <code>{s.node_id ?? ''}</code>
            </dd>
          </div>
          <div>
            <dt>Listens on</dt>
            <dd>{s.listen_address ?? 'nothing (peers cannot dial in)'}</dd>
          </div>
          <div>
            <dt>Connected</dt>
            <dd>
              {s.connected_peers} of {s.total_peers}
            </dd>
          </div>
          <div>
            <dt>Messages sent / received</dt>
            <dd>
              {fmtInt(s.messages.sent)} / {fmtInt(s.messages.received)}
            </dd>
          </div>
        </dl>
      )}
      {s && !s.enabled && (
        <p>
          Peer traffic is off: set <code>[peers] shared_secret</code> (the same on every node) and a <code>listen</code> address or peers to dial.
        </p>
      )}
      {s?.identity_fingerprint && (
        <p class="muted">
          Identity fingerprint: <code>{s.identity_fingerprint}</code>
        </p>
      )}

      <h2>Addresses this node dials</h2>
      <Table columns={['Address', 'Link', 'Node', { hidden: 'Actions' }]}>
        {(s?.connect ?? []).map((c) => (
          <tr>
            <th scope="row">
              <code>{c.address}</code>
            </th>
            <td>{c.state}</td>
            <td>{c.node_id ?? '—'}</td>
            <td class="inline">
              {canEdit &&
                (removing === c.address ? (
                  <span role="group" aria-label={`Confirm removing ${c.address}`}>
                    <button
                      type="button"
                      class="small danger"
                      disabled={action.busy}
                      onClick={() => {
                        setRemoving(null);
                        void action.run(() =>
                          setConnect(
                            s!.connect.map((x) => x.address).filter((x) => x !== c.address),
                            `Removed ${c.address}: its link is closed`,
                          ),
                        );
                      }}
                    >
                      Remove {c.address} now
                    </button>
                    <button type="button" class="small" onClick={() => setRemoving(null)}>
                      Keep it
                    </button>
                  </span>
                ) : (
                  <button type="button" class="small danger" aria-label={`Remove ${c.address}`} onClick={() => setRemoving(c.address)}>
                    Remove
                  </button>
                ))}
            </td>
          </tr>
        ))}
      </Table>
      {s && !s.connect.length && <p class="muted">None.</p>}
      {canEdit && (
        <form class="inline" onSubmit={add} aria-label="Add a peer">
          <label for="peer-address">Add a peer (host:port)</label>
          <input id="peer-address" value={address} required placeholder="alpha.lan:4600" onInput={(e) => setAddress(e.currentTarget.value)} />
          <button type="submit" disabled={action.busy || !s}>
            Add
          </button>
        </form>
      )}

      <h2>Peers</h2>
      <p class="muted">Nodes that proved the shared secret and their pinned identity, whichever side dialled.</p>
      <Table columns={['Node', 'Address', 'State', 'Last seen', 'Agents']}>
        {(peers.data?.peers ?? []).map((p) => (
          <tr>
            <th scope="row">
              {p.node_name} <code>{p.node_id}</code>
            </th>
            <td>
              <code>{p.address}</code>
            </td>
            <td>{p.state}</td>
            <td>{p.last_seen ? fmtTime(p.last_seen) : 'never'}</td>
            <td>{p.agents.map((a) => a.name).join(', ') || 'none'}</td>
          </tr>
        ))}
      </Table>
      {peers.data && !peers.data.peers.length && <p class="muted">No peer yet.</p>}
    </section>
  );
}
