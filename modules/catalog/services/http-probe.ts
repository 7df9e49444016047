/**
 * Outbound requests with a hard timeout, for connectivity tests, local runtime
 * detection, the device flow and registry downloads. Failures become ProbeError with a message a user can act on;
 * the caller's secret is scrubbed from anything echoed back.
 */
export class ProbeError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'ProbeError';
  }
}

export interface ProbeReply {
  status: number;
  body: unknown;
  latencyMs: number;
}

export function scrub(text: string, secret?: string): string {
  return secret ? text.split(secret).join('***') : text;
}

function reason(err: unknown): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'timed out';
  return e.cause?.code ?? e.cause?.message ?? e.message;
}

export interface ProbeInit {
  headers?: Record<string, string>;
  timeoutMs: number;
  /** Scrubbed from error messages. */
  secret?: string;
  method?: string;
  body?: string;
  /** Follow redirects (downloads); requests carrying a key never do, so it cannot be sent elsewhere. */
  follow?: boolean;
}

/** One request; resolves for any HTTP status, throws ProbeError when no answer came back. */
export async function probe(url: string, init: ProbeInit): Promise<ProbeReply> {
  const started = performance.now();
  let res: Response;
  let text: string;
  try {
    res = await fetch(url, {
      method: init.method ?? 'GET',
      headers: init.headers,
      body: init.body,
      signal: AbortSignal.timeout(init.timeoutMs),
      redirect: init.follow ? 'follow' : 'manual',
    });
    text = await res.text();
  } catch (err) {
    const why = reason(err);
    throw new ProbeError(`${url.split('?')[0]}: ${why === 'timed out' ? `no answer within ${init.timeoutMs} ms` : `unreachable (${scrub(why, init.secret)})`}`);
  }
  const latencyMs = Math.round(performance.now() - started);
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text for the error message
  }
  return { status: res.status, body, latencyMs };
}

/** A short, secret-free excerpt of an error body. */
export function excerpt(body: unknown, secret?: string): string {
  const raw = typeof body === 'string' ? body : JSON.stringify(body ?? '');
  return scrub(raw, secret).slice(0, 300);
}
