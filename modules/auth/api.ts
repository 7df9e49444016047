/**
 * Contract of the auth module: whether the API needs the bearer token, and
 * which routes answer without it. Import as @talon/auth.
 */
import { serviceRef } from '@talon/module-sdk';

export interface AuthStatus {
  /** True when api_key is set: every route but the public ones needs `Authorization: Bearer <api_key>`. */
  keyRequired(): boolean;
  /** True when the route (its Fastify url pattern) needs no bearer token. */
  isPublic(method: string, routeUrl: string | undefined, configPublic: boolean | undefined): boolean;
  /** Whether a value is the api_key (constant time): other tokens (hook tokens) must differ from it. */
  isApiKey(candidate: string): boolean;
  /** Checks an Authorization header against the api_key: undefined when it passes (or no key is set), else the reason. */
  verify(authorization: string | undefined): string | undefined;
}

export const authStatus = serviceRef<AuthStatus>('auth.status');

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Reachable without the bearer token while this returns true, asked per request: for a route whose owner's
     * configuration decides at run time (the A2A card with `[a2a] public_card`). A throw keeps the route closed.
     */
    publicWhen?: () => boolean;
  }
}
