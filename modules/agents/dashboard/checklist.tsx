/**
 * A searchable checklist (the builder's tools, skills and MCP servers): each item with its description, filtered as
 * the search is typed. A checked name the service does not list is shown too, marked unknown, so it can be unchecked.
 */
import { useState } from 'preact/hooks';

export interface CheckItem {
  name: string;
  description: string;
}

/** Enough rows to choose from without a long page: the search narrows the rest. */
const SHOWN = 40;

export function Checklist(props: {
  id: string;
  label: string;
  items: CheckItem[] | undefined;
  checked: string[];
  onChange: (names: string[]) => void;
  problem?: string;
  /** Why the list is empty (its module is not running...). */
  empty: string;
}) {
  const { id, label, items, checked, onChange, problem } = props;
  const [q, setQ] = useState('');
  const known = new Set((items ?? []).map((i) => i.name));
  const unknown = checked.filter((n) => !known.has(n)).map((name) => ({ name, description: '', unknown: true }));
  const needle = q.trim().toLowerCase();
  const all = [...unknown, ...(items ?? []).map((i) => ({ ...i, unknown: false }))];
  const found = needle ? all.filter((i) => i.name.toLowerCase().includes(needle) || i.description.toLowerCase().includes(needle)) : all;
  const toggle = (name: string, on: boolean) => onChange(on ? [...checked, name] : checked.filter((n) => n !== name));
  return (
    <fieldset class="checklist" aria-describedby={problem ? `${id}-problem` : undefined}>
      <legend>
        {label} <span class="muted">({checked.length} chosen)</span>
      </legend>
      <input
        id={`${id}-search`}
        type="search"
        aria-label={`Search ${label.toLowerCase()}`}
        placeholder="Search by name or description"
        value={q}
        onInput={(e) => setQ(e.currentTarget.value)}
      />
      {items === undefined && <p class="loading">Loading…</p>}
      {items?.length === 0 && !unknown.length && <p class="muted">{props.empty}</p>}
      <ul>
        {found.slice(0, SHOWN).map((i) => (
          <li key={i.name}>
            <label>
              <input type="checkbox" checked={checked.includes(i.name)} onChange={(e) => toggle(i.name, e.currentTarget.checked)} />{' '}
              <span class="code">{i.name}</span>
              {i.unknown ? <span class="badge state-stopped">unknown</span> : <span class="muted"> — {i.description}</span>}
            </label>
          </li>
        ))}
      </ul>
      {found.length > SHOWN && <p class="muted">{found.length - SHOWN} more: search to narrow the list.</p>}
      {problem && (
        <p id={`${id}-problem`} class="error" role="alert">
          {problem}
        </p>
      )}
    </fieldset>
  );
}
