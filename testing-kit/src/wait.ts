/** What a truthy check answers: the value waitFor returns. */
type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>;

/** Polls until check() returns a truthy value, which it answers (or throws after timeoutMs). */
export async function waitFor<T>(check: () => T | Promise<T>, timeoutMs = 5_000, what = 'condition'): Promise<Truthy<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as Truthy<T>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
