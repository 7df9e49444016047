const SECRET_KEY = /(^|_)(api_key|apikey|key|secret|token|password|pass|passphrase|credentials?)$/i;

export const REDACTED = '<redacted>';

/** True for keys whose values are secrets (`api_key`, `bot_token`...), but not for `api_key_env` (a variable name). */
export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

/** A deep copy with every non-empty secret value replaced. */
export function redactSecrets<T>(value: T): T {
  if (Array.isArray(value)) return value.map(redactSecrets) as T;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] = isSecretKey(k) && typeof v === 'string' && v !== '' ? REDACTED : redactSecrets(v);
    }
    return out as T;
  }
  return value;
}
