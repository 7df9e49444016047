/**
 * The one way the app talks to the service. With an api_key the key lives in sessionStorage only (gone when the
 * tab closes, never in a URL) and travels as `Authorization: Bearer`. Any 401 sends the app back to sign-in.
 * Errors carry the service's `{error}` text and the request id, so a person can quote it.
 */
const KEY = 'talon.api_key';

export const apiKey = {
  get: (): string | null => sessionStorage.getItem(KEY),
  set: (key: string) => sessionStorage.setItem(KEY, key),
  clear: () => sessionStorage.removeItem(KEY),
};

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly requestId?: string,
  ) {
    super(message);
  }
}

let unauthorized: () => void = () => undefined;
/** The app shell registers what a 401 does (back to sign-in). */
export function onUnauthorized(handler: () => void): void {
  unauthorized = handler;
}

export interface RequestOptions {
  method?: string;
  json?: unknown;
  body?: BodyInit;
  signal?: AbortSignal;
}

export function authHeaders(extra: Record<string, string> = {}): Record<string, string> {
  const key = apiKey.get();
  return key ? { ...extra, authorization: `Bearer ${key}` } : extra;
}

/** fetch with the key, JSON in and out; throws ApiError for any answer but 2xx. */
export async function request(path: string, options: RequestOptions = {}): Promise<Response> {
  const headers = authHeaders(options.json !== undefined ? { 'content-type': 'application/json' } : {});
  let res: Response;
  try {
    res = await fetch(path, {
      method: options.method ?? (options.json !== undefined || options.body ? 'POST' : 'GET'),
      headers,
      body: options.json !== undefined ? JSON.stringify(options.json) : options.body,
      signal: options.signal,
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError('The service cannot be reached. Is it running?', 0);
  }
  if (res.ok) return res;
  const requestId = res.headers.get('x-request-id') ?? undefined;
  let message = `${res.status} ${res.statusText}`;
  try {
    const body = (await res.json()) as { error?: unknown };
    if (typeof body.error === 'string') message = body.error;
  } catch {
    // not JSON: keep the status line
  }
  if (res.status === 401) unauthorized();
  throw new ApiError(message, res.status, requestId);
}

export async function api<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const res = await request(path, options);
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

/** A path segment from a value (ids, names, keys). */
export const seg = (value: string) => encodeURIComponent(value);
