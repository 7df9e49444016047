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
}

export const authStatus = serviceRef<AuthStatus>('auth.status');
