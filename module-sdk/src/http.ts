import type { FastifyInstance, FastifyBaseLogger, RawServerDefault, FastifyRequest, FastifyReply } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';

/**
 * The Fastify instance a module registers its routes on: an encapsulated
 * child of the current HTTP generation, with request types derived from each
 * route's JSON Schema.
 */
export type Routes = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, JsonSchemaToTsProvider>;

/** The root instance of a generation, for cross-cutting hooks that apply to every route. */
export type RootHttp = Routes;

export type { FastifyRequest, FastifyReply };

/** Per-route options the kernel and cross-cutting modules read from `config`. */
export interface TalonRouteConfig {
  /** Reachable without the bearer token even when api_key is set. */
  public?: boolean;
  /** Cost units charged by the rate limiter (default 1). */
  rateCost?: number;
  /** Polled endpoints (health, metrics): the access log writes their lines at debug level. */
  quiet?: boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    public?: boolean;
    rateCost?: number;
    quiet?: boolean;
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
