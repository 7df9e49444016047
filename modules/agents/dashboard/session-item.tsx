/**
 * One session in the list: its title (the label, else the first line of its first message), open it, rename it in
 * place, export it (Markdown or JSON, downloaded through fetch) and delete it after a confirmation in the row.
 */
import { useState } from 'preact/hooks';
import { api, download, fmtTime, plural, seg } from '@talon/dashboard-kit';

export interface SessionItem {
  session_id: string;
  label: string | null;
  title: string | null;
  parent_id: string | null;
  message_count: number;
  updated_at: string;
  current: boolean;
}

interface Props {
  session: SessionItem;
  agentId: string;
  current: boolean;
  /** Runs an action (errors show above the list), then reloads the list and the conversation unless `reload` is false. */
  act: (fn: () => Promise<unknown>, reload?: boolean) => void;
}

export function SessionRow({ session: s, agentId, current, act }: Props) {
  const [mode, setMode] = useState<'rename' | 'delete'>();
  const [name, setName] = useState('');
  const title = s.title ?? 'New conversation';
  const file = `session-${s.session_id.slice(0, 8)}`;

  if (mode === 'rename')
    return (
      <li class={current ? 'current' : ''}>
        <form
          class="session-rename"
          onSubmit={(e) => {
            e.preventDefault();
            setMode(undefined);
            // An empty name takes the label away: the title is the first line of the first message again.
            act(() => api(`/api/sessions/${seg(s.session_id)}/label`, { method: 'PUT', json: { label: name.trim() || null } }));
          }}
        >
          <label for={`rename-${s.session_id}`} class="sr-only">
            New name for {title}
          </label>
          <input id={`rename-${s.session_id}`} value={name} maxLength={200} onInput={(e) => setName(e.currentTarget.value)} autoFocus />
          <button type="submit" class="small primary">
            Save
          </button>
          <button type="button" class="small" onClick={() => setMode(undefined)}>
            Cancel
          </button>
        </form>
      </li>
    );

  return (
    <li class={current ? 'current' : ''}>
      <button
        type="button"
        class="link session-title"
        aria-current={current ? 'true' : undefined}
        onClick={() => act(() => api(`/api/agents/${seg(agentId)}/sessions/${seg(s.session_id)}/switch`, { method: 'POST' }))}
      >
        {s.parent_id && (
          <>
            <span aria-hidden="true">↳ </span>
            <span class="sr-only">Branch: </span>
          </>
        )}
        {title}
      </button>
      <span class="muted">
        {plural(s.message_count, 'message')} · {fmtTime(s.updated_at)}
      </span>
      {mode === 'delete' ? (
        <div class="row" role="group" aria-label={`Delete ${title}?`}>
          <span>Delete this session?</span>
          <button type="button" class="small danger" onClick={() => act(() => api(`/api/sessions/${seg(s.session_id)}`, { method: 'DELETE' }))}>
            Delete
          </button>
          <button type="button" class="small" onClick={() => setMode(undefined)}>
            Keep
          </button>
        </div>
      ) : (
        <div class="row session-actions">
          <button
            type="button"
            class="small"
            aria-label={`Rename ${title}`}
            onClick={() => {
              setName(s.label ?? s.title ?? '');
              setMode('rename');
            }}
          >
            Rename
          </button>
          <button
            type="button"
            class="small"
            aria-label={`Export ${title} as Markdown`}
            onClick={() => act(() => download(`/api/sessions/${seg(s.session_id)}/export?format=md`, `${file}.md`), false)}
          >
            Markdown
          </button>
          <button
            type="button"
            class="small"
            aria-label={`Export ${title} as JSON`}
            onClick={() => act(() => download(`/api/sessions/${seg(s.session_id)}/export?format=json`, `${file}.json`), false)}
          >
            JSON
          </button>
          <button type="button" class="small" aria-label={`Delete ${title}`} onClick={() => setMode('delete')}>
            Delete
          </button>
        </div>
      )}
    </li>
  );
}
