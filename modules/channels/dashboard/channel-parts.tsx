/** Small parts the channel pages share: reading again while shown, and the state badge. */
import { useEffect } from 'preact/hooks';
import type { ChannelRow } from './channel-types.ts';

/** How often the states are read again while the view is shown. */
export const POLL_MS = 3000;

/** Reads `reload` again every POLL_MS while the page is visible. */
export function usePoll(reload: () => Promise<void>): void {
  useEffect(() => {
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') void reload();
    }, POLL_MS);
    return () => clearInterval(timer);
  }, [reload]);
}

export function StateBadge({ row }: { row: Pick<ChannelRow, 'state' | 'configured' | 'enabled'> }) {
  const text = !row.configured ? 'not configured' : !row.enabled && row.state === 'stopped' ? 'disabled' : row.state;
  return <span class={`badge ${row.state === 'connected' ? 'ok' : row.state === 'error' ? 'off' : ''}`}>{text}</span>;
}
