import type { TestKernel } from './kernel.ts';

/**
 * Changes one configuration value of a running test kernel, as an edit of config.toml would:
 * validated in full, then applied (config.changed fires). `path` is dotted ('llm.max_retries').
 */
export async function setConfig(k: TestKernel, path: string, value: unknown): Promise<void> {
  const raw = k.kernel.config.raw();
  const keys = path.split('.');
  let table = raw;
  for (const key of keys.slice(0, -1)) {
    const next = table[key];
    table = (table[key] = next && typeof next === 'object' && !Array.isArray(next) ? next : {}) as Record<string, unknown>;
  }
  table[keys[keys.length - 1]] = value;
  await k.kernel.config.apply(raw, path);
}
