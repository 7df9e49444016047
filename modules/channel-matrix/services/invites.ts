/**
 * Invites, answered by the channel's policy: a direct one (is_direct) is taken unless dm_policy is disabled (under
 * allowlist, only from an allowed user), a room's unless group_policy is disabled; an encrypted room is declined. A
 * declined invite is left, so it does not wait for ever.
 *
 * Each answer is one request bounded by its own timeout and the connection's signal: a join goes through the
 * homeserver to the room's other servers (federation) and can hang, and the sync must not wait on it. An answer that
 * may yet succeed (timeout, network, 5xx, 429) is logged and kept here, to be made again on a later sync with backoff —
 * the sync goes on and its cursor moves, and an incremental sync does not list the invite again. A refused token fails
 * the sync (auth); any other 4xx will not change and is logged. An invite still not answered after maxAttempts is
 * reported in the log (its room, to invite the bot again) and dropped; those pending are also lost with the process.
 */
import type { AdapterContext } from '@talon/channels';
import { enc, type Json, type MatrixClient } from './client.ts';
import { isAuthFailure, MatrixError } from './errors.ts';
import type { MatrixEvent } from './inbound.ts';

export interface InviteTuning {
  /** One join or leave request's longest wait. */
  timeoutMs: number;
  /** The wait before answering again doubles from this, up to retryCapMs (429: at least its retry_after_ms). */
  retryBaseMs: number;
  retryCapMs: number;
  maxAttempts: number;
}

export const INVITE_TUNING: InviteTuning = { timeoutMs: 20_000, retryBaseMs: 30_000, retryCapMs: 30 * 60_000, maxAttempts: 10 };

interface Pending {
  state: MatrixEvent[];
  attempts: number;
  dueAt: number;
}

export class Invites {
  private readonly pending = new Map<string, Pending>();

  constructor(
    private readonly ctx: AdapterContext,
    private readonly client: MatrixClient,
    private readonly me: string,
    private readonly tuning: InviteTuning = INVITE_TUNING,
  ) {}

  /**
   * A sync's invites (room → its invite state) and the rooms it shows joined or left (pending answers made moot):
   * answers the new invites and those due again, together, each within its timeout. Rejects only on a refused token.
   */
  async onSync(invited: Record<string, MatrixEvent[]>, settled: Iterable<string>, signal: AbortSignal): Promise<void> {
    for (const roomId of settled) this.pending.delete(roomId);
    const due = new Map(Object.entries(invited));
    for (const [roomId, p] of this.pending) if (p.dueAt <= Date.now() && !due.has(roomId)) due.set(roomId, p.state);
    const results = await Promise.allSettled([...due].map(([roomId, state]) => this.answer(roomId, state, signal)));
    const refused = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (refused) throw refused.reason;
  }

  private async answer(roomId: string, state: MatrixEvent[], signal: AbortSignal): Promise<void> {
    const own = state.find((e) => e.type === 'm.room.member' && e.state_key === this.me);
    const inviter = own?.sender ?? '';
    const direct = (own?.content as Json | undefined)?.is_direct === true;
    const refusal = this.refusal(state, direct, inviter);
    const path = refusal ? `/rooms/${enc(roomId)}/leave` : `/join/${enc(roomId)}`;
    try {
      await this.client.call('POST', path, {}, { timeoutMs: this.tuning.timeoutMs, signal });
      this.pending.delete(roomId);
      this.ctx.log.info(
        { room: roomId, inviter, direct, ...(refusal ? { declined: refusal } : {}) },
        refusal ? 'matrix invite declined' : 'matrix invite accepted',
      );
    } catch (err) {
      if (isAuthFailure(err)) throw err;
      this.failed(roomId, state, err);
    }
  }

  private refusal(state: MatrixEvent[], direct: boolean, inviter: string): string | undefined {
    const policy = this.ctx.policy ?? { dm: 'pairing', group: 'mention', allowedUsers: [] };
    if (state.some((e) => e.type === 'm.room.encryption')) return 'the room is end-to-end encrypted (this adapter has no Matrix crypto)';
    if (direct && policy.dm === 'disabled') return 'dm_policy is disabled';
    if (direct && policy.dm === 'allowlist' && !policy.allowedUsers.includes(inviter)) return `${inviter} is not in allowed_users`;
    if (!direct && policy.group === 'disabled') return 'group_policy is disabled';
    return undefined;
  }

  /** A failed answer: kept for a later sync when it may yet succeed, else (or after maxAttempts) dropped and logged. */
  private failed(roomId: string, state: MatrixEvent[], err: unknown): void {
    const error = (err as Error).message ?? String(err);
    const lasting = err instanceof MatrixError && err.status >= 400 && err.status < 500 && err.status !== 429;
    const attempts = (this.pending.get(roomId)?.attempts ?? 0) + 1;
    if (lasting || attempts >= this.tuning.maxAttempts) {
      this.pending.delete(roomId);
      if (lasting) this.ctx.log.warn({ room: roomId, error }, 'matrix invite could not be answered');
      else this.ctx.log.error({ room: roomId, error, attempts }, 'matrix invite not answered after every attempt; invite the bot again');
      return;
    }
    const backoff = Math.min(this.tuning.retryCapMs, this.tuning.retryBaseMs * 2 ** (attempts - 1));
    const waitMs = Math.max(backoff, err instanceof MatrixError ? (err.retryAfterMs ?? 0) : 0);
    this.pending.set(roomId, { state, attempts, dueAt: Date.now() + waitMs });
    this.ctx.log.warn({ room: roomId, error, attempts, retryInMs: waitMs }, 'matrix invite not answered yet; answering again on a later sync');
  }
}
