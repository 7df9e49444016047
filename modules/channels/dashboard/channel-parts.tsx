/** Small parts the channel pages share: reading again while shown, an action that reads again, its feedback, the state badge. */
import { useEffect } from 'preact/hooks';
import { ErrorText, useAction, useApi } from '@talon/dashboard-kit';
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

/**
 * An action on what a card shows: `act(fn)` runs `fn` as the action (busy flag, error, its done message), then reads
 * the card's data again with `reload`, so the change shows at once rather than at the next poll.
 */
export function useReloadingAction(reload: () => Promise<void>) {
  const action = useAction();
  const act = (fn: () => Promise<string>) =>
    void action.run(async () => {
      const done = await fn();
      await reload();
      return done;
    });
  return { ...action, act };
}

/** A card's data, read again while shown, and an action on it (`useReloadingAction`). */
export function usePolledCard<T>(path: string) {
  const list = useApi<T>(path);
  usePoll(list.reload);
  return { list, action: useReloadingAction(list.reload) };
}

/** An action's outcome: its error (or `error`, the card's own, first), or what it did (announced to screen readers). */
export function ActionStatus({ action, error }: { action: { error: unknown; done?: string }; error?: unknown }) {
  return (
    <>
      <ErrorText error={error ?? action.error} />
      {action.done && <p role="status">{action.done}</p>}
    </>
  );
}
