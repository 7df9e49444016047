/** Client-side pages for lists that can grow past a few hundred items (models, logs, memories...). */
import { useEffect, useState } from 'preact/hooks';

export function usePage<T>(items: readonly T[], size = 50) {
  const [page, setPage] = useState(0);
  const pages = Math.max(1, Math.ceil(items.length / size));
  useEffect(() => {
    if (page >= pages) setPage(pages - 1);
  }, [page, pages]);
  const current = Math.min(page, pages - 1);
  return { items: items.slice(current * size, current * size + size), page: current, pages, setPage, total: items.length };
}

export function Pager({ page, pages, setPage, total, label }: { page: number; pages: number; setPage: (p: number) => void; total: number; label: string }) {
  if (pages <= 1)
    return (
      <p class="muted">
        {total} {label}
      </p>
    );
  return (
    <nav class="pager" aria-label={`${label} pages`}>
      <button type="button" disabled={page === 0} onClick={() => setPage(page - 1)}>
        Previous
      </button>
      <span>
        Page {page + 1} of {pages} ({total} {label})
      </span>
      <button type="button" disabled={page >= pages - 1} onClick={() => setPage(page + 1)}>
        Next
      </button>
    </nav>
  );
}
