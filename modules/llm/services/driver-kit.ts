/** The driver kit (`llm.drivers`): what driver modules need to speak to an SDK and report failures the llm service understands. */
import type { DriverKit } from '../api.ts';
import { errorFromResponse, isAbortError, isLlmError, llmError, toLlmError } from './errors.ts';

/**
 * A fetch that turns non-2xx answers into LlmError (status, Retry-After), for SDKs whose own
 * errors drop the response headers. Abort errors pass through.
 */
function failingFetch(provider: string, signal?: AbortSignal): typeof fetch {
  return async (input, init) => {
    const signals = [init?.signal, signal].filter((s): s is AbortSignal => Boolean(s));
    const response = await fetch(input, { ...init, signal: signals.length ? AbortSignal.any(signals) : undefined });
    if (!response.ok) throw await errorFromResponse(provider, response);
    return response;
  };
}

function parseToolInput(json: string): Record<string, unknown> {
  if (json.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(json);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : { value };
  } catch {
    return { _raw: json };
  }
}

function lazy<T>(make: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => {
    value ??= make().catch((err) => {
      value = undefined;
      throw err;
    });
    return value;
  };
}

export const driverKit: DriverKit = {
  error: llmError,
  isLlmError,
  isAbortError,
  toLlmError,
  failingFetch,
  parseToolInput,
  lazy,
};
