/**
 * The outbound journal's problems: reply chunks that failed, whose outcome is unknown after a crash, or that expired
 * unsent. Replay sends one again (once); Prune deletes one or all of them. The text is the agent's reply, shown as text.
 */
import { api, ConfirmButton, ErrorText, fmtTime, plural, seg, Table, useAction, useApi } from '@talon/dashboard-kit';
import { usePoll } from './channel-parts.tsx';

interface Problem {
  id: string;
  channel: string;
  chat_id: string;
  state: 'failed' | 'unknown' | 'expired';
  error: string | null;
  attempts: number;
  created_at: string;
  text: string | null;
}

export function JournalProblems({ channel }: { channel?: string }) {
  const query = channel ? `?channel=${encodeURIComponent(channel)}` : '';
  const list = useApi<{ items: Problem[]; total: number }>(`/api/channels/journal/problems${query}`);
  usePoll(list.reload);
  const action = useAction();
  const act = (fn: () => Promise<string>) =>
    void action.run(async () => {
      const done = await fn();
      await list.reload();
      return done;
    });
  const items = list.data?.items ?? [];
  const replay = (p: Problem) =>
    act(async () => {
      const r = await api<{ state: string; error: string | null }>(`/api/channels/journal/${seg(p.id)}/replay`, { json: {} });
      return r.state === 'sent' ? `Sent ${p.id} again` : `Replayed ${p.id}: ${r.state}${r.error ? ` (${r.error})` : ''}`;
    });
  return (
    <div class="card" aria-labelledby="journal-title">
      <h2 id="journal-title">Undelivered replies</h2>
      <p class="muted">
        {list.data ? `${plural(list.data.total, 'reply chunk')} failed, unknown or expired.` : ''} Nothing is re-sent on its own where the platform could show
        it twice.
      </p>
      <ErrorText error={list.error ?? action.error} />
      {action.done && <p role="status">{action.done}</p>}
      {items.length > 0 && (
        <>
          <Table columns={['Chunk', 'Channel', 'Chat', 'State', 'Text', { hidden: 'Actions' }]}>
            {items.map((p) => (
              <tr>
                <th scope="row">
                  <code>{p.id}</code>
                  <p class="muted">{fmtTime(p.created_at)}</p>
                </th>
                <td>{p.channel}</td>
                <td>{p.chat_id}</td>
                <td>
                  {p.state}
                  {p.error && <p class="warn">{p.error}</p>}
                  {p.attempts > 0 && <p class="muted">{plural(p.attempts, 'attempt')}</p>}
                </td>
                <td>{p.text ?? ''}</td>
                <td class="inline">
                  <button type="button" class="small" disabled={action.busy} aria-label={`Replay ${p.id}`} onClick={() => replay(p)}>
                    Replay
                  </button>
                  <ConfirmButton
                    small
                    label={`Prune ${p.id}`}
                    confirm={`Delete ${p.id} now`}
                    disabled={action.busy}
                    onConfirm={() => act(async () => (await api(`/api/channels/journal/${seg(p.id)}`, { method: 'DELETE' }), `Pruned ${p.id}`))}
                  >
                    Prune
                  </ConfirmButton>
                </td>
              </tr>
            ))}
          </Table>
          <ConfirmButton
            label={channel ? `Prune every problem of ${channel}` : 'Prune every problem'}
            confirm={`Delete ${plural(items.length, 'chunk')} now`}
            disabled={action.busy}
            onConfirm={() =>
              act(async () => {
                const r = await api<{ deleted: number }>(`/api/channels/journal/prune${query}`, { json: {} });
                return `Pruned ${plural(r.deleted, 'chunk')}`;
              })
            }
          >
            Prune all
          </ConfirmButton>
        </>
      )}
    </div>
  );
}
