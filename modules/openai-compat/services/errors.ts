import { HttpError } from '@talon/module-sdk';

/** The error body OpenAI clients parse: {error: {message, type, code}}. */
export interface OpenAiErrorBody {
  error: { message: string; type: string; code: string | null; param: string | null };
}

export interface OpenAiErrorReply {
  status: number;
  body: OpenAiErrorBody;
  headers?: Record<string, string>;
  /** Unexpected failure: log it with its stack, never show its message. */
  internal: boolean;
}

/** A client error with an OpenAI error code (model_not_found, missing_message...). */
export function openAiError(status: number, message: string, code: string): HttpError {
  return new HttpError(status, message, { extra: { code } });
}

const TYPES: Record<number, string> = {
  401: 'authentication_error',
  402: 'insufficient_quota',
  403: 'permission_error',
  429: 'rate_limit_error',
};

interface ErrorLike {
  message?: unknown;
  statusCode?: unknown;
  status?: unknown;
  code?: unknown;
  validation?: unknown;
  headers?: unknown;
  extra?: unknown;
}

/** Maps whatever a /v1 route, its body parser or its validation threw to an OpenAI-style reply. */
export function toOpenAiError(error: unknown): OpenAiErrorReply {
  const e = (error && typeof error === 'object' ? error : { message: String(error) }) as ErrorLike;
  const raw = typeof e.statusCode === 'number' ? e.statusCode : typeof e.status === 'number' ? e.status : 500;
  const status = raw >= 400 && raw <= 599 ? raw : 500;
  const internal = status >= 500 && !(error instanceof HttpError || (e as { name?: unknown }).name === 'HttpError');
  const message = internal ? 'internal server error' : typeof e.message === 'string' && e.message ? e.message : 'error';
  const extra = (e.extra && typeof e.extra === 'object' ? e.extra : {}) as { code?: unknown };
  let code: string | null = typeof extra.code === 'string' ? extra.code : null;
  if (!code && e.validation) code = 'invalid_request';
  if (!code && /^malformed JSON/.test(message)) code = 'invalid_json';
  if (!code && e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') code = 'request_too_large';
  const type = TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
  return {
    status,
    body: { error: { message, type, code, param: null } },
    headers: e.headers && typeof e.headers === 'object' && !Array.isArray(e.headers) ? (e.headers as Record<string, string>) : undefined,
    internal,
  };
}
