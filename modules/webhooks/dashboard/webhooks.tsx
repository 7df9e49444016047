/**
 * Webhooks: the outbound webhooks (name, URL, events) and the event webhooks (one event type each) with their state
 * and deliveries; create, send a test, pause or resume, delete (asked in two steps). A secret is typed into a password
 * field and never shown back (the service says only whether there is one).
 */
import { useState } from 'preact/hooks';
import { api, ErrorText, Pager, seg, Table, useAction, useApi, usePage } from '@talon/dashboard-kit';

interface Hook {
  id: string;
  url: string;
  enabled: boolean;
  has_secret: boolean;
  disabled_reason: string | null;
  consecutive_failures: number;
  deliveries: Record<string, number>;
  created_at: string;
  /** Outbound webhooks. */
  name?: string;
  events?: string[];
  /** Event webhooks. */
  event_type?: string;
}

export default function WebhooksView() {
  return (
    <section>
      <h1>Webhooks</h1>
      <p class="muted">
        Service events delivered as signed JSON POSTs, with retries and a delivery journal. Event names: <code>agent_spawned</code>,{' '}
        <code>message_completed</code>, <code>tool_invoked</code>, <code>workflow_failed</code>… or <code>all</code> (docs/webhooks.md).
      </p>
      <HookList kind="outbound" />
      <HookList kind="event" />
    </section>
  );
}

function HookList({ kind }: { kind: 'outbound' | 'event' }) {
  const base = kind === 'outbound' ? '/api/webhooks' : '/api/webhooks/events';
  const list = useApi<{ webhooks: Hook[] }>(base);
  const page = usePage(list.data?.webhooks ?? [], 50);
  const action = useAction();
  const [deleting, setDeleting] = useState<string | null>(null);
  const title = (h: Hook) => h.name ?? h.event_type ?? h.url;
  const act = (fn: () => Promise<string>) =>
    void action.run(async () => {
      const done = await fn();
      await list.reload();
      return done;
    });
  const test = async (h: Hook) => {
    // A target that cannot be reached is a 502 with the reason, shown as the action's error.
    const r = await api<{ response_status: number }>(`/api/webhooks/${seg(h.id)}/test`, { json: {} });
    return `Test sent to ${title(h)}: the target answered ${r.response_status}`;
  };
  const setEnabled = (h: Hook, enabled: boolean) =>
    act(async () => (await api(`${base}/${seg(h.id)}`, { method: 'PUT', json: { enabled } }), `${title(h)} ${enabled ? 'resumed' : 'paused'}`));
  return (
    <>
      <h2>{kind === 'outbound' ? 'Outbound webhooks' : 'Event webhooks'}</h2>
      <ErrorText error={list.error ?? action.error} />
      {action.done && <p role="status">{action.done}</p>}
      <Table columns={[kind === 'outbound' ? 'Name' : 'Event', 'Target', 'Events', 'State', 'Deliveries', { hidden: 'Actions' }]}>
        {page.items.map((h) => (
          <tr>
            <th scope="row">{title(h)}</th>
            <td>
              <code>{h.url}</code>
              {h.has_secret && <span class="muted"> (signed)</span>}
            </td>
            <td>{(h.events ?? [h.event_type]).join(', ')}</td>
            <td>
              {h.enabled ? 'active' : 'paused'}
              {h.disabled_reason && <p class="warn">{h.disabled_reason}</p>}
              {h.consecutive_failures > 0 && <p class="muted">{h.consecutive_failures} failed in a row</p>}
            </td>
            <td>
              {Object.entries(h.deliveries)
                .map(([state, n]) => `${n} ${state}`)
                .join(', ') || 'none'}
            </td>
            <td class="inline">
              {kind === 'outbound' && (
                <button type="button" class="small" disabled={action.busy} aria-label={`Send a test to ${title(h)}`} onClick={() => act(() => test(h))}>
                  Test
                </button>
              )}
              <button
                type="button"
                class="small"
                disabled={action.busy}
                onClick={() => setEnabled(h, !h.enabled)}
                aria-label={`${h.enabled ? 'Pause' : 'Resume'} ${title(h)}`}
              >
                {h.enabled ? 'Pause' : 'Resume'}
              </button>
              {deleting === h.id ? (
                <span role="group" aria-label={`Confirm deleting ${title(h)}`}>
                  <button
                    type="button"
                    class="small danger"
                    disabled={action.busy}
                    onClick={() => {
                      setDeleting(null);
                      act(async () => (await api(`${base}/${seg(h.id)}`, { method: 'DELETE' }), `Deleted ${title(h)}`));
                    }}
                  >
                    Delete {title(h)} and its journal
                  </button>
                  <button type="button" class="small" onClick={() => setDeleting(null)}>
                    Keep it
                  </button>
                </span>
              ) : (
                <button type="button" class="small danger" aria-label={`Delete ${title(h)}`} onClick={() => setDeleting(h.id)}>
                  Delete
                </button>
              )}
            </td>
          </tr>
        ))}
      </Table>
      <Pager {...page} label="webhooks" />
      <CreateForm kind={kind} created={list.reload} />
    </>
  );
}

function CreateForm({ kind, created }: { kind: 'outbound' | 'event'; created: () => Promise<void> }) {
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState('');
  const [secret, setSecret] = useState('');
  const action = useAction();
  const id = (field: string) => `${kind}-hook-${field}`;
  const submit = action.submit(async () => {
    const names = events
      .split(/[\s,]+/)
      .map((e) => e.trim())
      .filter(Boolean);
    const body =
      kind === 'outbound'
        ? { name: name.trim(), url: url.trim(), events: names, ...(secret && { secret }) }
        : { event_type: names[0] ?? '', url: url.trim(), secret };
    const hook = await api<Hook>(kind === 'outbound' ? '/api/webhooks' : '/api/webhooks/events', { json: body });
    setName('');
    setUrl('');
    setEvents('');
    setSecret('');
    await created();
    return `Created ${hook.name ?? hook.event_type}`;
  });
  return (
    <form class="grid-form card" onSubmit={submit} aria-label={kind === 'outbound' ? 'New outbound webhook' : 'New event webhook'}>
      <h3>{kind === 'outbound' ? 'New outbound webhook' : 'New event webhook'}</h3>
      {kind === 'outbound' && (
        <div class="field">
          <label for={id('name')}>Name</label>
          <input id={id('name')} value={name} required onInput={(e) => setName(e.currentTarget.value)} />
        </div>
      )}
      <div class="field">
        <label for={id('url')}>Target URL</label>
        <input id={id('url')} type="url" value={url} required placeholder="https://example.com/hook" onInput={(e) => setUrl(e.currentTarget.value)} />
      </div>
      <div class="field">
        <label for={id('events')}>{kind === 'outbound' ? 'Events (separated by commas or spaces)' : 'Event'}</label>
        <input id={id('events')} value={events} required placeholder="agent_spawned" onInput={(e) => setEvents(e.currentTarget.value)} />
      </div>
      <div class="field">
        <label for={id('secret')}>{kind === 'outbound' ? 'Signing secret (optional, 8 characters or more)' : 'Signing secret (8 characters or more)'}</label>
        <input
          id={id('secret')}
          type="password"
          autocomplete="new-password"
          value={secret}
          required={kind === 'event'}
          onInput={(e) => setSecret(e.currentTarget.value)}
        />
      </div>
      <button type="submit" class="primary" disabled={action.busy}>
        Create
      </button>
      <ErrorText error={action.error} />
      {action.done && <p role="status">{action.done}</p>}
    </form>
  );
}
