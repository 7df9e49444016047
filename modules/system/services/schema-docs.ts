/**
 * Route schemas carry OpenAPI documentation keys (summary, tags...), which
 * Fastify's FastifySchema type does not know without @fastify/swagger. This
 * augmentation belongs in module-sdk/src/http.ts (asked of the lead); until
 * then it lives here, and it applies to every module's routes at type level.
 */
declare module 'fastify' {
  interface FastifySchema {
    summary?: string;
    description?: string;
    tags?: string[];
    /** Left out of /api/openapi.json. */
    hide?: boolean;
  }
}

export {};
