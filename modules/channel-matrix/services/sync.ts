/**
 * The /sync long-polling loop, one connection of the kit's reconnect loop. Each response's invites are answered by
 * the channel's policy (invites.ts: each answer bounded, one that fails made again on a later sync, so none holds the
 * loop), each new room message is handed to ctx.emit, and only when every one of them is committed is the response's
 * next_batch stored as the cursor and asked for next: a failed commit ends the connection with the cursor unmoved, so
 * the homeserver hands the same events again and the journal drops those it has.
 */
import type { AdapterContext, ChannelKit } from '@talon/channels';
import { SYNC_TIMEOUT_MS, type MatrixClient } from './client.ts';
import type { SyncCursor } from './cursor.ts';
import { toInbound, type InboundDeps, type MatrixEvent } from './inbound.ts';
import { Invites, type InviteTuning } from './invites.ts';
import type { Rooms } from './rooms.ts';

export type ReconnectLink = Parameters<ConstructorParameters<ChannelKit['Reconnector']>[0]['connect']>[0];

/** No presence or account data: the adapter reads rooms only. */
const FILTER = JSON.stringify({ presence: { not_types: ['*'] }, account_data: { not_types: ['*'] } });
/** The first sync of an account: the rooms' history is not new to it, so no timeline is asked for. */
const FIRST_FILTER = JSON.stringify({ presence: { not_types: ['*'] }, account_data: { not_types: ['*'] }, room: { timeline: { limit: 0 } } });

interface SyncResponse {
  next_batch: string;
  rooms?: {
    join?: Record<string, { timeline?: { events?: MatrixEvent[] }; state?: { events?: MatrixEvent[] } }>;
    invite?: Record<string, { invite_state?: { events?: MatrixEvent[] } }>;
    leave?: Record<string, unknown>;
  };
}

export class Syncer {
  private readonly invites: Invites;

  constructor(
    private readonly ctx: AdapterContext,
    private readonly client: MatrixClient,
    private readonly rooms: Rooms,
    private readonly cursor: SyncCursor,
    private readonly deps: InboundDeps,
    inviteTuning?: InviteTuning,
  ) {
    this.invites = new Invites(ctx, client, rooms.me, inviteTuning);
  }

  async connect(link: ReconnectLink): Promise<void> {
    let since = await this.cursor.get();
    // The first poll answers at once, so the connection is known good without waiting out a long poll.
    for (let timeout = 0; !link.signal.aborted; timeout = SYNC_TIMEOUT_MS) {
      const query: Record<string, string> = { timeout: String(timeout), filter: since ? FILTER : FIRST_FILTER, ...(since ? { since } : {}) };
      const res = await this.client.call<SyncResponse>('GET', '/sync', undefined, { query, timeoutMs: timeout + 30_000, signal: link.signal });
      link.ready();
      const invited = Object.fromEntries(Object.entries(res.rooms?.invite ?? {}).map(([roomId, room]) => [roomId, room.invite_state?.events ?? []]));
      await this.invites.onSync(invited, [...Object.keys(res.rooms?.join ?? {}), ...Object.keys(res.rooms?.leave ?? {})], link.signal);
      for (const [roomId, room] of Object.entries(res.rooms?.join ?? {})) {
        for (const ev of room.state?.events ?? []) this.noteState(roomId, ev);
        for (const ev of room.timeline?.events ?? []) {
          this.noteState(roomId, ev);
          this.rooms.noteSender(ev.event_id, ev.sender);
          // The first sync of an account carries history only (no timeline is asked; a server may send some).
          if (since) await this.message(roomId, ev);
        }
      }
      await this.cursor.set(res.next_batch);
      since = res.next_batch;
      link.traffic();
    }
  }

  private noteState(roomId: string, ev: MatrixEvent): void {
    if (ev.type === 'm.room.encryption') this.rooms.markEncrypted(roomId);
    if (ev.type === 'm.room.member') this.rooms.membershipChanged(roomId);
  }

  private async message(roomId: string, ev: MatrixEvent): Promise<void> {
    if (ev.type === 'm.room.encrypted' || (ev.type === 'm.room.message' && this.rooms.isEncrypted(roomId))) {
      this.rooms.markEncrypted(roomId);
      if (this.rooms.firstWarning(roomId))
        this.ctx.log.warn({ room: roomId }, 'matrix room is end-to-end encrypted: its messages are not read or answered (this adapter has no Matrix crypto)');
      return;
    }
    const message = await toInbound(roomId, ev, this.deps);
    // Resolves after the journal commit (or when it knew the event already); a rejection ends this connection.
    if (message) await this.ctx.emit(message);
  }
}
