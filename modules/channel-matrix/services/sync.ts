/**
 * The /sync long-polling loop, one connection of the kit's reconnect loop. Each response's invites are answered by
 * the channel's policy, each new room message is handed to ctx.emit, and only when every one of them is committed is
 * the response's next_batch stored as the cursor and asked for next: a failed commit ends the connection with the
 * cursor unmoved, so the homeserver hands the same events again and the journal drops those it has.
 */
import type { AdapterContext, ChannelKit } from '@talon/channels';
import { enc, SYNC_TIMEOUT_MS, type Json, type MatrixClient } from './client.ts';
import type { SyncCursor } from './cursor.ts';
import { MatrixError } from './errors.ts';
import { toInbound, type InboundDeps, type MatrixEvent } from './inbound.ts';
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
  };
}

export class Syncer {
  constructor(
    private readonly ctx: AdapterContext,
    private readonly client: MatrixClient,
    private readonly rooms: Rooms,
    private readonly cursor: SyncCursor,
    private readonly deps: InboundDeps,
  ) {}

  async connect(link: ReconnectLink): Promise<void> {
    let since = await this.cursor.get();
    // The first poll answers at once, so the connection is known good without waiting out a long poll.
    for (let timeout = 0; !link.signal.aborted; timeout = SYNC_TIMEOUT_MS) {
      const query: Record<string, string> = { timeout: String(timeout), filter: since ? FILTER : FIRST_FILTER, ...(since ? { since } : {}) };
      const res = await this.client.call<SyncResponse>('GET', '/sync', undefined, { query, timeoutMs: timeout + 30_000, signal: link.signal });
      link.ready();
      for (const [roomId, room] of Object.entries(res.rooms?.invite ?? {})) await this.invited(roomId, room.invite_state?.events ?? []);
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

  /**
   * An invite: a direct one (is_direct) is taken unless dm_policy is disabled (under allowlist, only from an allowed
   * user), a room's unless group_policy is disabled; an encrypted room is declined. A declined invite is left, so it
   * does not wait for ever.
   */
  private async invited(roomId: string, state: MatrixEvent[]): Promise<void> {
    const own = state.find((e) => e.type === 'm.room.member' && e.state_key === this.rooms.me);
    const inviter = own?.sender ?? '';
    const direct = (own?.content as Json | undefined)?.is_direct === true;
    const policy = this.ctx.policy ?? { dm: 'pairing', group: 'mention', allowedUsers: [] };
    let refusal: string | undefined;
    if (state.some((e) => e.type === 'm.room.encryption')) refusal = 'the room is end-to-end encrypted (this adapter has no Matrix crypto)';
    else if (direct && policy.dm === 'disabled') refusal = 'dm_policy is disabled';
    else if (direct && policy.dm === 'allowlist' && !policy.allowedUsers.includes(inviter)) refusal = `${inviter} is not in allowed_users`;
    else if (!direct && policy.group === 'disabled') refusal = 'group_policy is disabled';
    const path = refusal ? `/rooms/${enc(roomId)}/leave` : `/join/${enc(roomId)}`;
    try {
      await this.client.call('POST', path, {}, { signal: this.ctx.signal });
      this.ctx.log.info(
        { room: roomId, inviter, direct, ...(refusal ? { declined: refusal } : {}) },
        refusal ? 'matrix invite declined' : 'matrix invite accepted',
      );
    } catch (err) {
      // A room gone or closed to the bot will not change; anything else fails the sync, so the invite comes again.
      if (!(err instanceof MatrixError) || err.status >= 500 || err.status === 429 || err.status === 401) throw err;
      this.ctx.log.warn({ room: roomId, error: err.message }, 'matrix invite could not be answered');
    }
  }
}
