/**
 * The Gateway session of one connection, for @discordjs/ws's retrieveSessionInfo/updateSessionInfo. Two reasons it is
 * ours rather than the library's default: that default is one store per process, shared by every manager (two copies
 * of this module during a reload would resume each other's session), and the sequence a RESUME sends is Discord's
 * acknowledgement: it stays below every MESSAGE_CREATE not yet committed to the journal, so a connection lost before
 * the commit gets that message replayed (the journal drops what it already has by message id).
 */
import type { SessionInfo } from '@discordjs/ws';

export class GatewaySession {
  private info: SessionInfo | null = null;
  /** Sequence numbers of dispatches handed to the journal and not committed yet. */
  private readonly pending = new Set<number>();

  /** `resumeUrl` vets READY's resume_gateway_url (the socket is opened by the library, outside the net module). */
  constructor(private readonly resumeUrl: (url: string) => string) {}

  retrieve = (): SessionInfo | null => {
    if (!this.info || !this.pending.size) return this.info;
    return { ...this.info, sequence: Math.min(this.info.sequence, Math.min(...this.pending) - 1) };
  };

  update = (_shardId: number, next: SessionInfo | null): void => {
    if (!next) {
      this.info = null;
      return;
    }
    const same = this.info?.sessionId === next.sessionId;
    // Sequences of another session mean nothing here; their messages are still being committed in this process.
    if (!same) this.pending.clear();
    // A replayed dispatch never moves the sequence back.
    this.info = { ...next, resumeURL: this.resumeUrl(next.resumeURL), sequence: same ? Math.max(next.sequence, this.info!.sequence) : next.sequence };
  };

  hold(sequence: number): void {
    this.pending.add(sequence);
  }

  release(sequence: number): void {
    this.pending.delete(sequence);
  }
}
