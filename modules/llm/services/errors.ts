/**
 * The errors of an LLM call. They cross module bundles and outlive reloads of this module, so they
 * are recognised by name and fields (see LlmError in the contract), never by class identity.
 */
import type { LlmError, LlmErrorInit, LlmRefusedError } from '../api.ts';

class ProviderFailure extends Error implements LlmError {
  override readonly name = 'LlmError' as const;
  readonly status?: number;
  readonly retryAfterMs?: number;
  readonly provider?: string;
  readonly retryable: boolean;

  constructor(message: string, init: LlmErrorInit) {
    super(message);
    this.status = init.status;
    this.retryAfterMs = init.retryAfterMs;
    this.provider = init.provider;
    const s = init.status;
    this.retryable = s === undefined || s === 429 || s === 408 || s >= 500;
  }
}

class Refusal extends Error implements LlmRefusedError {
  override readonly name = 'LlmRefusedError' as const;

  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

export const llmError = (message: string, init: LlmErrorInit = {}): LlmError => new ProviderFailure(message, init);

export const refusal = (message: string, status: number): LlmRefusedError => new Refusal(message, status);

export function isLlmError(err: unknown): err is LlmError {
  return err instanceof Error && err.name === 'LlmError' && typeof (err as { retryable?: unknown }).retryable === 'boolean';
}

/** True for the rejection of an aborted fetch/SDK call (DOMException or SDK abort error). */
export function isAbortError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  return err.name === 'AbortError' || err.name === 'APIUserAbortError' || (err.cause instanceof Error && err.cause.name === 'AbortError');
}

/** A Retry-After header (seconds or HTTP date) in milliseconds; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** The LlmError for a non-2xx provider response, with the provider's own message when its body has one. */
export async function errorFromResponse(provider: string, response: Response): Promise<LlmError> {
  let detail = response.statusText;
  try {
    const text = await response.text();
    detail = providerMessage(text) ?? (text.slice(0, 300) || detail);
  } catch {
    // the body is only used for the message
  }
  return llmError(`provider '${provider}' answered ${response.status}: ${detail}`, {
    status: response.status,
    retryAfterMs: retryAfterMs(response.headers.get('retry-after')),
    provider,
  });
}

function providerMessage(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown };
    if (typeof body.error === 'string') return body.error;
    if (body.error && typeof body.error === 'object' && typeof (body.error as { message?: unknown }).message === 'string')
      return (body.error as { message: string }).message;
    if (typeof body.message === 'string') return body.message;
  } catch {
    // not JSON
  }
  return undefined;
}

/**
 * Normalises whatever an SDK threw into an LlmError: an LlmError (also as a cause) as is, SDK HTTP
 * errors with their status and Retry-After, anything else as a network error (no status: retryable).
 * Abort errors are returned unchanged.
 */
export function toLlmError(err: unknown, provider: string): Error {
  if (isAbortError(err)) return err as Error;
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (isLlmError(e)) return e;
  }
  const message = err instanceof Error ? err.message : String(err);
  const status = typeof (err as { status?: unknown })?.status === 'number' ? (err as { status: number }).status : undefined;
  const headers = (err as { headers?: unknown })?.headers;
  const retryAfter = headers instanceof Headers ? retryAfterMs(headers.get('retry-after')) : undefined;
  if (status !== undefined) return llmError(`provider '${provider}' answered ${status}: ${message}`, { status, retryAfterMs: retryAfter, provider });
  const cause = err instanceof Error && err.cause instanceof Error ? ` (${err.cause.message})` : '';
  return llmError(`provider '${provider}' could not be reached: ${message}${cause}`, { provider });
}
