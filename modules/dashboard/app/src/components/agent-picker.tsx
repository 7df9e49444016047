/**
 * The agent chooser of the chat and of every form that names an agent (schedules, triggers, memory, workflow
 * steps): a combobox with a list popup (the WAI-ARIA 1.2 pattern) that asks the service for agents a page at a time
 * (GET /api/agents?q=&limit=&offset=, the service filters by name, description and tags) as the person types or
 * scrolls, and puts only the rows in view into the page. Thousands of agents cost one request per page read and a
 * screenful of DOM, where a <select> read and rendered all of them.
 */
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { api, seg } from '../lib/api.tsx';
import { fmtInt, plural } from '../lib/format.tsx';
import { ErrorText } from './error.tsx';

export interface AgentChoice {
  id: string;
  name: string;
  state: string;
}

const PAGE = 50;
/** Every row has this height, which is what lets the list render only the rows in view. */
const ROW_PX = 32;
const VISIBLE_ROWS = 10;
/** Rows rendered above and below the view, so a fast scroll shows no gap; the next page is asked this near the end. */
const SPARE_ROWS = 5;
const TYPING_MS = 120;

interface Found {
  query: string;
  items: AgentChoice[];
  more: boolean;
  loading: boolean;
  error?: unknown;
}

/** The agents matching `query`, read while the list is open: the first page after a pause in typing, then on demand. */
function useAgentSearch(query: string, open: boolean) {
  const [found, setFound] = useState<Found>({ query: '', items: [], more: false, loading: false });
  // Only the latest request may write: an answer for text since changed is dropped.
  const latest = useRef(0);
  async function read(q: string, before: AgentChoice[]) {
    const mine = ++latest.current;
    setFound((f) => ({ ...f, loading: true }));
    try {
      const page = await api<AgentChoice[]>(`/api/agents?${q ? `q=${seg(q)}&` : ''}limit=${PAGE}&offset=${before.length}`);
      if (mine === latest.current) setFound({ query: q, items: [...before, ...page], more: page.length === PAGE, loading: false });
    } catch (error) {
      if (mine === latest.current) setFound((f) => ({ ...f, loading: false, error }));
    }
  }
  useEffect(() => {
    if (!open) return;
    const timer = setTimeout(() => void read(query, []), TYPING_MS);
    return () => clearTimeout(timer);
  }, [query, open]);
  const loadMore = () => {
    if (found.more && !found.loading && found.query === query) void read(query, found.items);
  };
  return { ...found, current: found.query === query, loadMore };
}

interface PickerProps {
  /** The box's id; the list's and the rows' ids derive from it, so several choosers can share a page. */
  id: string;
  /** Rendered beside the box; without it the form labels the box itself (`<label for={id}>`). */
  label?: string;
  /** The agent chosen now, its name shown while the list is closed; null: none; undefined: not known yet (the box keeps its text). */
  chosen?: { name: string } | null;
  onChoose: (agent: AgentChoice) => void;
  /** Shown in the empty box: what no choice means. */
  placeholder?: string;
  /** For an optional agent: emptying the box and leaving it (or Enter) withdraws the choice. */
  onClear?: () => void;
}

export function AgentPicker({ id, label, chosen, onChoose, placeholder = 'Type to find an agent', onClear }: PickerProps) {
  const [open, setOpen] = useState(false);
  const [text, setText] = useState(chosen?.name ?? '');
  const [query, setQuery] = useState('');
  const [active, setActive] = useState(-1);
  const [scrollTop, setScrollTop] = useState(0);
  const scroller = useRef<HTMLUListElement>(null);
  const found = useAgentSearch(query, open);
  const items = found.current ? found.items : [];

  const shown = chosen === null ? '' : chosen?.name;
  // The box shows the agent in use once it is known. Not on closing: a choice just made shows until it is in use
  // (the chat reads it after the URL changes), and leaving without one puts the name back itself. A layout effect, run
  // as the change renders: an effect waits for the next paint, and one still pending when the person empties the box
  // put the name back over the emptied text (it saw the list as closed).
  useLayoutEffect(() => {
    if (!open && shown !== undefined) setText(shown);
  }, [shown]);

  const close = () => {
    setOpen(false);
    setActive(-1);
  };
  const choose = (agent: AgentChoice) => {
    close();
    setText(agent.name);
    onChoose(agent);
  };
  const leave = () => {
    if (onClear && chosen && !text.trim()) onClear();
    else if (shown !== undefined) setText(shown);
    close();
  };
  /** Makes row i the active one and scrolls it into view (so it is rendered before it is named as active). */
  const moveTo = (i: number) => {
    if (!items.length) return;
    const to = Math.max(0, Math.min(items.length - 1, i));
    setActive(to);
    const el = scroller.current;
    if (el) {
      if (to * ROW_PX < el.scrollTop) el.scrollTop = to * ROW_PX;
      else if ((to + 1) * ROW_PX > el.scrollTop + el.clientHeight) el.scrollTop = (to + 1) * ROW_PX - el.clientHeight;
      setScrollTop(el.scrollTop);
    }
    if (to >= items.length - SPARE_ROWS) found.loadMore();
  };
  const onScroll = (el: HTMLUListElement) => {
    setScrollTop(el.scrollTop);
    if (el.scrollTop + el.clientHeight >= (items.length - SPARE_ROWS) * ROW_PX) found.loadMore();
  };
  const onKeyDown = (e: KeyboardEvent) => {
    const step = { ArrowDown: 1, ArrowUp: -1, PageDown: VISIBLE_ROWS, PageUp: -VISIBLE_ROWS }[e.key];
    if (step !== undefined) {
      e.preventDefault();
      if (!open) setOpen(true);
      else moveTo(active + step);
    } else if (e.key === 'Enter' && open && items[active]) {
      e.preventDefault();
      choose(items[active]);
    } else if (e.key === 'Enter' && onClear && chosen && !text.trim()) {
      e.preventDefault();
      leave();
    } else if (e.key === 'Escape' && (open || (shown !== undefined && text !== shown))) {
      e.preventDefault();
      close();
      if (shown !== undefined) setText(shown);
    }
  };

  const first = Math.max(0, Math.floor(scrollTop / ROW_PX) - SPARE_ROWS);
  const last = Math.min(items.length, first + VISIBLE_ROWS + 2 * SPARE_ROWS);
  const status = !open
    ? ''
    : !found.current || (found.loading && !items.length)
      ? 'Searching…'
      : found.error
        ? ''
        : items.length
          ? found.more
            ? `${fmtInt(items.length)}+ agents`
            : plural(items.length, 'agent')
          : 'No agent matches';
  return (
    <div class="picker">
      {label && <label for={id}>{label}</label>}
      {/* The box holds the popup, so the list opens under the text box wherever the chooser stands. */}
      <div class="picker-box">
        <input
          id={id}
          role="combobox"
          aria-autocomplete="list"
          aria-expanded={open}
          aria-controls={`${id}-options`}
          aria-activedescendant={open && items[active] ? `${id}-option-${active}` : undefined}
          autocomplete="off"
          spellcheck={false}
          placeholder={placeholder}
          value={text}
          onFocus={(e) => e.currentTarget.select()}
          onClick={() => setOpen(true)}
          onBlur={leave}
          onKeyDown={onKeyDown}
          onInput={(e) => {
            setText(e.currentTarget.value);
            setQuery(e.currentTarget.value.trim());
            setOpen(true);
            setActive(0);
            setScrollTop(0);
            if (scroller.current) scroller.current.scrollTop = 0;
          }}
        />
        {/* The list scrolls (as a combobox's popup it needs no focus of its own); empty rows of the height of those not
          rendered stand in for them, so the scroll bar is that of the whole list read so far. */}
        <ul
          id={`${id}-options`}
          role="listbox"
          aria-label="Agents"
          class="picker-options"
          ref={scroller}
          hidden={!open || !items.length}
          onScroll={(e) => onScroll(e.currentTarget)}
          style={{ maxHeight: VISIBLE_ROWS * ROW_PX }}
        >
          {first > 0 && <li role="none" style={{ height: first * ROW_PX }} />}
          {items.slice(first, last).map((a, n) => {
            const i = first + n;
            return (
              <li
                id={`${id}-option-${i}`}
                key={a.id}
                role="option"
                aria-selected={i === active}
                aria-posinset={i + 1}
                aria-setsize={found.more ? -1 : items.length}
                class={i === active ? 'active' : undefined}
                style={{ height: ROW_PX }}
                // Keep the focus in the box: a click chooses without a blur closing the list first.
                onMouseDown={(e) => e.preventDefault()}
                onClick={() => choose(a)}
              >
                {a.name} <span class="muted">({a.state})</span>
              </li>
            );
          })}
          {last < items.length && <li role="none" style={{ height: (items.length - last) * ROW_PX }} />}
        </ul>
      </div>
      <span class="picker-status muted" role="status">
        {status}
      </span>
      {open && <ErrorText error={found.error} />}
    </div>
  );
}
