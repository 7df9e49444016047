import type { FastifyInstance, FastifyBaseLogger, FastifyTypeProvider, RawServerDefault, FastifyRequest, FastifyReply } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';

/**
 * The reply type of a response schema: an object with at least the listed properties. json-schema-to-ts gives an
 * object without `additionalProperties: false` a `[x: string]: unknown` signature, which a value typed by an interface
 * never fits (an interface has no index signature): TypeScript then reported a long TS2769 about `websocket`. Without
 * the signature any value with the listed properties fits. The reply is sent as JSON.stringify sends it (the schema
 * documents and types it; it does not filter it).
 */
export type Sent<T> = T extends readonly unknown[]
  ? { [K in keyof T]: Sent<T[K]> }
  : T extends object
    ? { [K in keyof T as string extends K ? never : K]: Sent<T[K]> }
    : T;

/** json-schema-to-ts for request types (as @fastify/type-provider-json-schema-to-ts), `Sent` for replies. */
export interface TalonTypeProvider extends FastifyTypeProvider {
  validator: this['schema'] extends JSONSchema ? FromSchema<this['schema']> : unknown;
  serializer: this['schema'] extends JSONSchema ? Sent<FromSchema<this['schema']>> : unknown;
}

/**
 * The Fastify instance a module registers its routes on: an encapsulated
 * child of the current HTTP generation, with request types derived from each
 * route's JSON Schema.
 */
export type Routes = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, TalonTypeProvider>;

/** The root instance of a generation, for cross-cutting hooks that apply to every route. */
export type RootHttp = Routes;

/**
 * The stages of the root HTTP pipeline, in the order a request passes them. A module's `http()` part names its stage
 * (`httpStage`, default `handle`), and runs there whatever the modules' load order; the parts of one stage run in
 * module order.
 * - `identify`: name the request (its id on every answer), before anything can answer it;
 * - `headers`: headers every answer carries, whichever part sends it;
 * - `limit`: charge the client before it is known who it is, so failed credentials cost too;
 * - `authenticate`: admit the caller or refuse it;
 * - `origin`: cross-origin rules for browsers (preflights are answered here);
 * - `handle`: the rest — body parsers, error handlers, route guards.
 */
export const HTTP_STAGES = ['identify', 'headers', 'limit', 'authenticate', 'origin', 'handle'] as const;
export type HttpStage = (typeof HTTP_STAGES)[number];

export type { FastifyRequest, FastifyReply };

/** Per-route options the kernel and cross-cutting modules read from `config`. */
export interface TalonRouteConfig {
  /** Reachable without the bearer token even when api_key is set. */
  public?: boolean;
  /** Cost units charged by the rate limiter (without it: a read 1, a write 5). */
  rateCost?: number;
  /** Polled endpoints (health, metrics): the access log writes their lines at debug level. */
  quiet?: boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    public?: boolean;
    rateCost?: number;
    quiet?: boolean;
    /** Set by the kernel, not by a route: the module that registered it (http.response's `module`). */
    module?: string;
  }
  /** OpenAPI documentation keys on route schemas (GET /api/openapi.json reads them). */
  interface FastifySchema {
    summary?: string;
    description?: string;
    tags?: readonly string[];
    /** Left out of /api/openapi.json. */
    hide?: boolean;
  }
}
