import { HttpError } from '@talon/module-sdk';
import { explainedValidation } from './explain.ts';

export interface ErrorReply {
  statusCode: number;
  message: string;
  headers?: Record<string, string>;
  extra?: Record<string, unknown>;
  /** Unexpected: log it with its stack. */
  internal: boolean;
}

interface ErrorLike {
  name?: unknown;
  message?: unknown;
  statusCode?: unknown;
  code?: unknown;
  validation?: unknown;
  headers?: unknown;
  extra?: unknown;
}

const isHttpError = (e: ErrorLike): boolean => e instanceof HttpError || e.name === 'HttpError';

/**
 * Maps what a route, a hook, a body parser or Fastify threw to the reply.
 * Client errors keep their message (it names what is wrong); server errors
 * thrown as HttpError keep theirs (the module chose it); anything else is an
 * internal failure whose details stay in the log.
 */
export function classify(error: unknown, context: { contentType?: string; bodyLimit?: number; schema?: Record<string, unknown> }): ErrorReply {
  const e = (error && typeof error === 'object' ? error : { message: String(error) }) as ErrorLike;
  const status = typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode <= 599 ? e.statusCode : 500;
  const message = typeof e.message === 'string' && e.message ? e.message : 'error';
  if (isHttpError(e)) {
    return {
      statusCode: status,
      message,
      headers: e.headers as Record<string, string> | undefined,
      extra: e.extra as Record<string, unknown> | undefined,
      internal: false,
    };
  }
  if (e.validation) return { statusCode: 400, message: explainedValidation(e, context.schema) ?? message, internal: false };
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return {
      statusCode: 413,
      message: context.bodyLimit ? `request body is larger than ${context.bodyLimit} bytes` : 'request body is too large',
      internal: false,
    };
  }
  if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    const type = context.contentType?.split(';')[0].trim();
    return { statusCode: 415, message: `unsupported media type${type ? ` '${type}'` : ''}: send application/json`, internal: false };
  }
  if (status < 500) return { statusCode: status, message, internal: false };
  return { statusCode: 500, message: 'internal server error', internal: true };
}
