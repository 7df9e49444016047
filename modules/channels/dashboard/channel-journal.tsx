/**
 * The outbound journal's problems: reply chunks that failed, whose outcome is unknown after a crash, or that expired
 * unsent. Replay sends one again (once); Prune deletes one or all of them. The text is the agent's reply, shown as text.
 */
import { api, ConfirmButton, fmtTime, plural, seg, Table } from '@talon/dashboard-kit';
import { ActionStatus, usePolledCard, type useReloadingAction } from './channel-parts.tsx';

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

type Action = ReturnType<typeof useReloadingAction>;

export function JournalProblems({ channel }: { channel?: string }) {
  const query = channel ? `?channel=${encodeURIComponent(channel)}` : '';
  const { list, action } = usePolledCard<{ items: Problem[]; total: number }>(`/api/channels/journal/problems${query}`);
  const items = list.data?.items ?? [];
  return (
    <div class="card" aria-labelledby="journal-title">
      <h2 id="journal-title">Undelivered replies</h2>
      <p class="muted">
        {list.data ? `${plural(list.data.total, 'reply chunk')} failed, unknown or expired.` : ''} Nothing is re-sent on its own where the platform could show
        it twice.
      </p>
      <ActionStatus action={action} error={list.error} />
      {items.length > 0 && (
        <>
          <Table columns={['Chunk', 'Channel', 'Chat', 'State', 'Text', { hidden: 'Actions' }]}>
            {items.map((p) => (
              <ProblemRow problem={p} action={action} />
            ))}
          </Table>
          <PruneAll channel={channel} query={query} count={items.length} action={action} />
        </>
      )}
    </div>
  );
}

/** One chunk, with its Replay and Prune. */
function ProblemRow({ problem: p, action }: { problem: Problem; action: Action }) {
  const replay = () =>
    action.act(async () => {
      const r = await api<{ state: string; error: string | null }>(`/api/channels/journal/${seg(p.id)}/replay`, { json: {} });
      return r.state === 'sent' ? `Sent ${p.id} again` : `Replayed ${p.id}: ${r.state}${r.error ? ` (${r.error})` : ''}`;
    });
  return (
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
        <button type="button" class="small" disabled={action.busy} aria-label={`Replay ${p.id}`} onClick={replay}>
          Replay
        </button>
        <ConfirmButton
          small
          label={`Prune ${p.id}`}
          confirm={`Delete ${p.id} now`}
          disabled={action.busy}
          onConfirm={() => action.act(async () => (await api(`/api/channels/journal/${seg(p.id)}`, { method: 'DELETE' }), `Pruned ${p.id}`))}
        >
          Prune
        </ConfirmButton>
      </td>
    </tr>
  );
}

/** Deletes every problem shown (of the channel, or of all). */
function PruneAll({ channel, query, count, action }: { channel?: string; query: string; count: number; action: Action }) {
  return (
    <ConfirmButton
      label={channel ? `Prune every problem of ${channel}` : 'Prune every problem'}
      confirm={`Delete ${plural(count, 'chunk')} now`}
      disabled={action.busy}
      onConfirm={() =>
        action.act(async () => {
          const r = await api<{ deleted: number }>(`/api/channels/journal/prune${query}`, { json: {} });
          return `Pruned ${plural(r.deleted, 'chunk')}`;
        })
      }
    >
      Prune all
    </ConfirmButton>
  );
}
