/**
 * The sign-ins begun and not yet called back, in oidc_pending: a callback may land on another process or node than
 * its login. Each lasts ten minutes and is taken once: DELETE … RETURNING hands a state to one callback only, so two
 * callbacks of one state (a replay, a double submit, two nodes) cannot both go on to the code exchange.
 */
import type { Queries } from '@talon/module-sdk';

export const PENDING_MS = 10 * 60 * 1000;
/** The most sign-ins waiting at once (the oldest go first): logins cost a row each and need no key. */
export const MAX_PENDING = 1000;

export interface Pending {
  provider: string;
  verifier: string;
  nonce: string;
  redirectUri: string;
  at: number;
}

interface Row {
  provider: string;
  verifier: string;
  nonce: string;
  redirect_uri: string;
  created_at: number;
}

export class PendingSignIns {
  constructor(
    private readonly store: Queries,
    private readonly now: () => number = Date.now,
    private readonly max = MAX_PENDING,
  ) {}

  /** Remembers a sign-in under its state, after dropping the expired ones and the oldest beyond the cap. */
  async add(state: string, p: Omit<Pending, 'at'>): Promise<void> {
    const now = this.now();
    await this.store.tx(async (t) => {
      await t.run('DELETE FROM oidc_pending WHERE created_at <= ? OR state NOT IN (SELECT state FROM oidc_pending ORDER BY created_at DESC, state LIMIT ?)', [
        now - PENDING_MS,
        this.max - 1,
      ]);
      await t.run('INSERT INTO oidc_pending (state, provider, verifier, nonce, redirect_uri, created_at) VALUES (?, ?, ?, ?, ?, ?)', [
        state,
        p.provider,
        p.verifier,
        p.nonce,
        p.redirectUri,
        now,
      ]);
    });
  }

  /** The sign-in of this state, removed so that no other callback gets it; undefined when unknown, taken or expired. */
  async take(state: string): Promise<Pending | undefined> {
    const row = await this.store.one<Row>('DELETE FROM oidc_pending WHERE state = ? RETURNING provider, verifier, nonce, redirect_uri, created_at', [state]);
    if (!row || this.now() - row.created_at > PENDING_MS) return undefined;
    return { provider: row.provider, verifier: row.verifier, nonce: row.nonce, redirectUri: row.redirect_uri, at: row.created_at };
  }
}
