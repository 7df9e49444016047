/** The sessions of an agent: list, new, switch, label, search (labels, ids and message text). */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ErrorText, fmtTime, Pager, seg, useAction, useServerPage } from '@talon/dashboard-kit';

interface SessionItem {
  session_id: string;
  label: string | null;
  message_count: number;
  updated_at: string;
  current: boolean;
}
interface SessionPage {
  items: SessionItem[];
  total: number;
}

export function Sessions({ agentId, currentId, turns, onChanged }: { agentId: string; currentId?: string; turns: number; onChanged: () => void }) {
  const [q, setQ] = useState('');
  const [search, setSearch] = useState('');
  const path = search ? `/api/sessions/search?q=${seg(search)}&agent_id=${seg(agentId)}` : `/api/agents/${seg(agentId)}/sessions`;
  const list = useServerPage<SessionPage, SessionItem>(path, (d) => d, 20);
  // A turn or a switch elsewhere changes the sessions: the list's counts and marks follow. Not when the
  // conversation first learns its session id: the list was just read.
  const seen = useRef(currentId);
  useEffect(() => {
    if (seen.current !== undefined) void list.reload();
    seen.current = currentId;
  }, [currentId, turns]);
  const action = useAction();
  // On a phone the list folds behind the button (styles.css); wider screens show it beside the chat.
  const [open, setOpen] = useState(false);

  const act = (fn: () => Promise<unknown>) =>
    void action.run(async () => {
      await fn();
      await list.reload();
      onChanged();
      setOpen(false);
    });

  return (
    <aside id="sessions" class={open ? 'sessions open' : 'sessions'} aria-label="Sessions">
      <button type="button" class="sessions-toggle" aria-expanded={open} aria-controls="sessions" onClick={() => setOpen(!open)}>
        Sessions
      </button>
      <div class="row">
        <h2>Sessions</h2>
        <button type="button" onClick={() => act(() => api(`/api/agents/${seg(agentId)}/session/reset`, { method: 'POST' }))}>
          New session
        </button>
      </div>
      <form
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setSearch(q.trim());
        }}
      >
        <label for="session-search" class="sr-only">
          Search sessions
        </label>
        <input id="session-search" type="search" placeholder="Search sessions" value={q} onInput={(e) => setQ(e.currentTarget.value)} />
      </form>
      <ErrorText error={list.error ?? action.error} />
      <ul class="session-list">
        {list.items.map((s) => (
          <li class={s.session_id === currentId ? 'current' : ''}>
            <button
              type="button"
              class="link"
              aria-current={s.session_id === currentId ? 'true' : undefined}
              onClick={() => act(() => api(`/api/agents/${seg(agentId)}/sessions/${seg(s.session_id)}/switch`, { method: 'POST' }))}
            >
              {s.label ?? `Session ${s.session_id.slice(0, 8)}`}
            </button>
            <span class="muted">
              {s.message_count} messages · {fmtTime(s.updated_at)}
            </span>
            <button
              type="button"
              class="small"
              aria-label={`Label session ${s.label ?? s.session_id.slice(0, 8)}`}
              onClick={() => {
                const label = prompt('Label for this session (empty removes it)', s.label ?? '');
                if (label !== null) act(() => api(`/api/sessions/${seg(s.session_id)}/label`, { method: 'PUT', json: { label: label.trim() || null } }));
              }}
            >
              Label
            </button>
          </li>
        ))}
      </ul>
      {(list.pages ?? 1) > 1 && <Pager {...list} label="sessions" />}
    </aside>
  );
}
