/**
 * Contract of the oidc module (`@talon/oidc`): the dashboard session as a credential. The auth module can accept a
 * request that carries a valid session cookie through this service (see docs/auth.md); the session ends at its
 * expiry or at POST /auth/logout.
 */
import { serviceRef } from '@talon/module-sdk';

export interface SessionPrincipal {
  /** 'oidc:<provider>:<sub>' */
  subject: string;
  role: 'admin';
  via: 'session';
  provider: string;
  email: string | null;
  expiresAt: string;
}

export interface DashboardSessions {
  /** The signed-in user of the session cookie in these headers, or undefined. */
  authenticate(headers: Record<string, string | string[] | undefined>): SessionPrincipal | undefined;
}

export const dashboardSessions = serviceRef<DashboardSessions>('oidc.sessions');
