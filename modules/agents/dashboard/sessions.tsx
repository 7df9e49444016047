/** The sessions of an agent: list, new, switch, rename, export, delete, search as you type (titles, ids and message text). */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ErrorText, Pager, seg, useAction, useServerPage } from '@talon/dashboard-kit';
import { SessionRow, type SessionItem } from './session-item.tsx';

/** Typing pauses this long before the list is searched. */
const SEARCH_DELAY_MS = 250;

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

  const act = (fn: () => Promise<unknown>, reload = true) =>
    void action.run(async () => {
      await fn();
      if (!reload) return;
      await list.reload();
      onChanged();
      setOpen(false);
    });
  // Search as you type: the list follows the box once typing pauses.
  useEffect(() => {
    const timer = setTimeout(() => setSearch(q.trim()), SEARCH_DELAY_MS);
    return () => clearTimeout(timer);
  }, [q]);

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
        {list.items.map((item) => (
          <SessionRow key={item.session_id} session={item} agentId={agentId} current={item.session_id === currentId} act={act} />
        ))}
      </ul>
      {(list.pages ?? 1) > 1 && <Pager {...list} label="sessions" />}
    </aside>
  );
}
