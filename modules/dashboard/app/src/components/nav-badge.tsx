/**
 * The count a view's declaration asks for beside its name in the navigation (`badge = { path, field }`): read when
 * the navigation shows, every 30 s, and at once when a view calls refreshBadges() after changing what it counts.
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../lib/api.tsx';

const EVERY_MS = 30_000;
const REFRESH = 'talon:badges';

/** Views call this after an action that changes a count in the navigation (a decision, a turn that held a call). */
export function refreshBadges(): void {
  window.dispatchEvent(new Event(REFRESH));
}

export function NavBadge({ badge, title }: { badge: { path: string; field: string }; title: string }) {
  const [count, setCount] = useState(0);
  useEffect(() => {
    const read = () =>
      api<Record<string, unknown>>(badge.path)
        .then((body) => setCount(typeof body[badge.field] === 'number' ? (body[badge.field] as number) : 0))
        .catch(() => undefined); // a count that cannot be read is not shown; the view itself reports errors
    read();
    const timer = setInterval(read, EVERY_MS);
    window.addEventListener(REFRESH, read);
    return () => {
      clearInterval(timer);
      window.removeEventListener(REFRESH, read);
    };
  }, [badge.path, badge.field]);
  if (!count) return null;
  return (
    <span class="nav-badge" data-testid={`badge-${title}`}>
      {count}
      <span class="sr-only"> {title.toLowerCase()} waiting</span>
    </span>
  );
}
