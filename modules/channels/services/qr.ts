/**
 * The QR sign-ins in progress in this process, one per channel. A sign-in belongs to the adapter as it runs now: when
 * the adapter stops (disable, remove, unload, module stop) or restarts with another configuration, a sign-in still
 * being scanned is cancelled and dropped, so no session outlives its adapter. An authenticated one survives the
 * restart it caused, so the page polling it still reads `authenticated`; the next start replaces it.
 */
import type { QrSession } from '@talon/channels';

export class QrSignIns {
  private readonly sessions = new Map<string, QrSession>();

  get(channel: string): QrSession | undefined {
    return this.sessions.get(channel);
  }

  /** The channel's new sign-in (its last one ended first: `end`). */
  set(channel: string, session: QrSession): void {
    this.sessions.set(channel, session);
  }

  /**
   * Cancels and drops the channel's sign-in: before a new one, or when its adapter stopped here (`restarting`: for a
   * restart, which keeps an authenticated one).
   */
  end(channel: string, restarting = false): void {
    const session = this.sessions.get(channel);
    if (!session || (restarting && session.status().status === 'authenticated')) return;
    this.sessions.delete(channel);
    session.cancel();
  }
}
