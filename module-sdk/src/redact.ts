const SECRET_KEY = /(^|_)(api_key|apikey|key|secret|token|password|pass|passphrase|credentials?)$/i;

export const REDACTED = '<redacted>';

/** True for keys whose values are secrets (`api_key`, `bot_token`...), but not for `api_key_env` (a variable name). */
export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

const isPlain = (v: unknown): v is Record<string, unknown> => {
  if (!v || typeof v !== 'object') return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
};

/**
 * The value with every non-empty secret replaced, descending into plain
 * objects and arrays only (errors, dates and buffers are left alone). Parts
 * without secrets are returned as they are, so the common case allocates nothing.
 */
export function redactSecrets<T>(value: T): T {
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((item) => {
      const r = redactSecrets(item);
      if (r !== item) changed = true;
      return r;
    });
    return (changed ? out : value) as T;
  }
  if (!isPlain(value)) return value;
  let out: Record<string, unknown> | undefined;
  for (const [k, v] of Object.entries(value)) {
    const r = isSecretKey(k) && typeof v === 'string' && v !== '' ? REDACTED : redactSecrets(v);
    if (r !== v) (out ??= { ...value })[k] = r;
  }
  return (out ?? value) as T;
}
