/** Runs a user action (a save, a delete...) with a busy flag and its error kept for display. */
import { useState } from 'preact/hooks';

export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const [done, setDone] = useState<string | undefined>(undefined);
  async function run(fn: () => Promise<string | void>): Promise<boolean> {
    setBusy(true);
    setError(undefined);
    setDone(undefined);
    try {
      setDone((await fn()) ?? undefined);
      return true;
    } catch (err) {
      setError(err);
      return false;
    } finally {
      setBusy(false);
    }
  }
  /** An onSubmit handler that runs `fn` as this action (and keeps the page from reloading). */
  const submit = (fn: () => Promise<string | void>) => (e: Event) => {
    e.preventDefault();
    void run(fn);
  };
  return { busy, error, done, run, submit };
}
