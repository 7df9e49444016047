/**
 * An error a client caused or may see. The error-envelope module turns it into
 * `{error: message}` with its status code; anything else becomes a 500.
 */
export class HttpError extends Error {
  readonly statusCode: number;
  readonly headers?: Record<string, string>;
  readonly extra?: Record<string, unknown>;
  constructor(statusCode: number, message: string, options?: { headers?: Record<string, string>; extra?: Record<string, unknown> }) {
    super(message);
    this.name = 'HttpError';
    this.statusCode = statusCode;
    this.headers = options?.headers;
    this.extra = options?.extra;
  }
}

export const badRequest = (message: string) => new HttpError(400, message);
export const unauthorized = (message: string) => new HttpError(401, message);
export const forbidden = (message: string) => new HttpError(403, message);
export const notFound = (message: string) => new HttpError(404, message);
export const conflict = (message: string) => new HttpError(409, message);
export const payloadTooLarge = (message: string) => new HttpError(413, message);
export const tooManyRequests = (message: string, retryAfterSeconds: number) =>
  new HttpError(429, message, { headers: { 'retry-after': String(retryAfterSeconds) } });

/** The body every error reply carries. */
export function errorBody(message: string, extra?: Record<string, unknown>): { error: string } & Record<string, unknown> {
  return { ...extra, error: message };
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string): boolean => UUID_RE.test(value);

/** Throws 400 naming the field when value is not a UUID; returns the canonical (lowercase) form. */
export function requireUuid(value: string, what: string): string {
  if (!isUuid(value)) throw badRequest(`invalid ${what}: '${value}' is not a UUID`);
  return value.toLowerCase();
}

/**
 * An invalid configuration: start-up stops with exit code 2 and this message (name the key and the
 * problem). Told apart by name, so a copy bundled into a module is recognised too.
 */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export const isConfigError = (err: unknown): err is ConfigError => err instanceof Error && err.name === 'ConfigError';
