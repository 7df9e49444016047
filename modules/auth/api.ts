/**
 * Contract of the auth module: whether the API needs the bearer token, which routes answer without it, and the
 * `authenticate` hook through which sign-in modules (oidc, pairing) admit their own credentials. Import as @talon/auth.
 */
import { defineHooks, serviceRef, SyncBailHook } from '@talon/module-sdk';

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

/** What an `authenticate` tap sees of a request that did not carry the api_key. */
export interface CredentialRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly ip: string;
}

/** Who a credential belongs to, as a tap answers it; the auth module decides what that identity may do. */
export interface Principal {
  /** Who it is, for logs: 'oidc:<provider>:<sub>', 'device:<id>'. */
  subject: string;
  /** 'admin' may use every route; 'user' not the ones that change or expose the service itself. */
  role: 'admin' | 'user';
  /** The credential is a cookie the browser attaches on its own: a change made with it must carry this service as its Origin. */
  cookie?: boolean;
}

export const authHooks = defineHooks('auth.hooks', () => ({
  /**
   * Asked (synchronously: every request passes here) when a request lacks the api_key while one is set. A sign-in
   * module answers the principal of a credential it issued, else undefined. A throwing tap counts as no answer,
   * and an answer that is not a well-formed Principal is refused: the request is never let in by an error.
   */
  authenticate: new SyncBailHook<[CredentialRequest], Principal | undefined>(['request']),
}));

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Reachable without the bearer token while this returns true, asked per request: for a route whose owner's
     * configuration decides at run time (the A2A card with `[a2a] public_card`). A throw keeps the route closed.
     */
    publicWhen?: () => boolean;
  }
}
