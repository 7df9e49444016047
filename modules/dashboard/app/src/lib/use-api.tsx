/** Loads a resource for a view: data, error, loading, and reload() after a change. */
import { useCallback, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { api } from './api.tsx';

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => Promise<void>;
}

export function useApi<T>(path: string | null): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [loading, setLoading] = useState(path !== null);
  // Only the latest read may write: an answer that arrives after a later read began (of this path or of one since
  // changed, e.g. the whole list after a search) is dropped, so it never replaces a newer answer.
  const latest = useRef(0);
  const reload = useCallback(async () => {
    const mine = ++latest.current;
    if (path === null) return setLoading(false);
    setLoading(true);
    try {
      const answer = await api<T>(path);
      if (mine !== latest.current) return;
      setData(answer);
      setError(undefined);
    } catch (err) {
      if (mine === latest.current) setError(err);
    } finally {
      if (mine === latest.current) setLoading(false);
    }
  }, [path]);
  // A layout effect: the request goes out as the view mounts, not a frame later.
  useLayoutEffect(() => {
    setData(undefined);
    void reload();
  }, [reload]);
  return { data, error, loading, reload };
}
