/**
 * Pages for lists that can grow past a few hundred items: usePage cuts a list the service gives whole,
 * useServerPage asks the service for one page at a time (limit and offset).
 */
import { useEffect, useState } from 'preact/hooks';
import { useApi, type Loaded } from '../lib/use-api.tsx';
import { plural } from '../lib/format.tsx';

export interface PageState {
  page: number;
  /** Known page count, or undefined while the service has not said how many items there are. */
  pages: number | undefined;
  setPage: (p: number) => void;
  total: number | undefined;
  /** Whether a next page may exist (the total unknown and the page full). */
  more: boolean;
}

export function usePage<T>(items: readonly T[], size = 50): PageState & { items: T[] } {
  const [page, setPage] = useState(0);
  const pages = Math.max(1, Math.ceil(items.length / size));
  useEffect(() => {
    if (page >= pages) setPage(pages - 1);
  }, [page, pages]);
  const current = Math.min(page, pages - 1);
  return { items: items.slice(current * size, current * size + size), page: current, pages, setPage, total: items.length, more: false };
}

/**
 * One page of `base` (a path, with or without a query) at a time. `pick` finds the items and, when the service gives
 * it, the total; without a total a full page means there may be more. Back to the first page when `base` changes.
 */
export function useServerPage<D, T>(base: string | null, pick: (data: D) => { items: T[]; total?: number }, size = 50): PageState & Loaded<D> & { items: T[] } {
  const [state, setState] = useState({ base, page: 0 });
  const page = state.base === base ? state.page : 0;
  const sep = base?.includes('?') ? '&' : '?';
  const loaded = useApi<D>(base === null ? null : `${base}${sep}limit=${size}&offset=${page * size}`);
  const got = loaded.data ? pick(loaded.data) : { items: [] as T[] };
  const total = got.total ?? (loaded.data && got.items.length < size ? page * size + got.items.length : undefined);
  return {
    ...loaded,
    items: got.items,
    page,
    pages: total === undefined ? undefined : Math.max(1, Math.ceil(total / size)),
    setPage: (p: number) => setState({ base, page: p }),
    total,
    more: total === undefined && got.items.length >= size,
  };
}

/**
 * The singular of a pager's label ("entries" → "entry", "top-level goals" → "top-level goal"): the labels are plural
 * nouns; one that these two rules get wrong passes `one`.
 */
const singular = (label: string) => (label.endsWith('ies') ? `${label.slice(0, -3)}y` : label.replace(/s$/, ''));

/** `label` names the items in the plural ("schedules"); `one` is its singular when it is not the label less its s. */
export function Pager({ page, pages, setPage, total, more, label, one }: PageState & { label: string; one?: string }) {
  const count = (n: number) => plural(n, one ?? singular(label), label);
  if (pages === 1 || (pages === undefined && !more && page === 0)) return <p class="muted">{count(total ?? 0)}</p>;
  const last = pages === undefined ? !more : page >= pages - 1;
  return (
    <nav class="pager" aria-label={`${label} pages`}>
      <button type="button" disabled={page === 0} onClick={() => setPage(page - 1)}>
        Previous
      </button>
      <span>
        Page {page + 1}
        {pages !== undefined && ` of ${pages}`}
        {total !== undefined && ` (${count(total)})`}
      </span>
      <button type="button" disabled={last} onClick={() => setPage(page + 1)}>
        Next
      </button>
    </nav>
  );
}
