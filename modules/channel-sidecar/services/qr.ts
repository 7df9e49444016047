/**
 * QR sign-in for sidecars that log in by QR (the reference's wechat): the program publishes the code (`qr_ready`)
 * and its progress (`qr_status`) on its own once it runs; a sign-in here reads what the running program published.
 */
import type { QrSession } from '@talon/channels';

export interface QrState {
  code: string;
  expiresAt?: string;
  /** The program's word: pending, scanning, confirmed, expired, or anything else (a failure). */
  status: string;
}

const STATUS: Record<string, 'pending' | 'scanned' | 'authenticated' | 'expired'> = {
  pending: 'pending',
  scanning: 'scanned',
  confirmed: 'authenticated',
  expired: 'expired',
};

/** The session over the program's QR state; `read` gives the state of the program running now. */
export function qrSession(first: QrState, read: () => QrState | undefined): QrSession {
  let cancelled = false;
  // Signed in (or over) stays so: the channels module restarts the adapter on `authenticated`, and the program it
  // starts publishes no QR state of its own.
  let settled: ReturnType<QrSession['status']> | undefined;
  return {
    code: first.code,
    // A code without an expiry from the program is taken as the reference's 5 minutes.
    expiresAt: first.expiresAt ?? new Date(Date.now() + 5 * 60_000).toISOString(),
    status() {
      if (settled) return settled;
      if (cancelled) return { status: 'failed', error: 'the sign-in was cancelled' };
      const now = read();
      if (!now) return { status: 'failed', error: 'the sidecar program is not running' };
      const status = STATUS[now.status];
      const result: ReturnType<QrSession['status']> = status
        ? { status }
        : { status: 'failed', error: `the sidecar reported QR status '${now.status.slice(0, 40)}'` };
      if (result.status !== 'pending' && result.status !== 'scanned') settled = result;
      return result;
    },
    cancel() {
      cancelled = true;
    },
  };
}
