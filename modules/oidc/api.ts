/**
 * Contract of the oidc module (`@talon/oidc`): the dashboard session as a credential. The module taps the auth
 * module's `authenticate` hook so a request with a valid session cookie is admitted (see docs/auth.md); this service
 * lets others (the dashboard page) read the session. It ends at its expiry or at POST /auth/logout.
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
