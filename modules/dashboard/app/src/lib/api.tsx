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

/** What the page said about signing in (services/page.ts of the module). */
export const authMode = () => document.querySelector<HTMLMetaElement>('meta[name="talon-auth"]')?.content ?? 'open';
export const oidcOffered = () => document.querySelector('meta[name="talon-oidc"]') !== null;
/** The running modules when the page named them (the API is open to this browser), else undefined. */
export function runningModules(): Set<string> | undefined {
  const named = document.querySelector<HTMLMetaElement>('meta[name="talon-modules"]')?.content;
  return named === undefined ? undefined : new Set(named.split(' ').filter(Boolean));
}

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly requestId?: string,
    /** The whole error body: some refusals say more than `error` (a manifest's `problems`, each on its field). */
    readonly body?: Record<string, unknown>,
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
  let body: Record<string, unknown> | undefined;
  try {
    body = (await res.json()) as Record<string, unknown>;
    if (typeof body.error === 'string') message = body.error;
  } catch {
    // not JSON: keep the status line
  }
  if (res.status === 401) unauthorized();
  throw new ApiError(message, res.status, requestId, body);
}

/**
 * GETs started before the view that reads them exists: the first view's reads go out beside the sign-in probe
 * instead of after it. Each is taken once, and only while fresh.
 */
const early = new Map<string, { at: number; res: Promise<Response> }>();
const EARLY_FOR_MS = 10_000;

export function prefetch(path: string): void {
  const res = request(path);
  res.catch(() => undefined); // a failure is met by the view that takes it (or by the probe)
  early.set(path, { at: Date.now(), res });
}

function takeEarly(path: string): Promise<Response> | undefined {
  const hit = early.get(path);
  early.delete(path);
  return hit && Date.now() - hit.at < EARLY_FOR_MS ? hit.res : undefined;
}

export async function api<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const plainGet = options.method === undefined && options.json === undefined && options.body === undefined && !options.signal;
  const res = await ((plainGet && takeEarly(path)) || request(path, options));
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

/** A path segment from a value (ids, names, keys). */
export const seg = (value: string) => encodeURIComponent(value);
