/**
 * What the adapter knows of its rooms: direct (two members) or a group, end-to-end encrypted or not, and which events
 * are the bot's own (a reply to one is a mention). Each answer is asked of the homeserver once and kept; a membership
 * change in the room forgets its member count.
 */
import { enc, type MatrixClient } from './client.ts';

/** Rooms and event senders kept; past this the oldest are asked again. */
const MAX_KEPT = 2_000;

export class Rooms {
  private readonly members = new Map<string, number>();
  private readonly encrypted = new Set<string>();
  private readonly warned = new Set<string>();
  private readonly senders = new Map<string, string>();

  constructor(
    private readonly client: MatrixClient,
    readonly me: string,
    private readonly signal: AbortSignal,
  ) {}

  /** A room of at most two joined members (the bot and one person) is a direct message. */
  async isDirect(roomId: string): Promise<boolean> {
    let count = this.members.get(roomId);
    if (count === undefined) {
      const res = await this.client.call<{ joined?: Record<string, unknown> }>('GET', `/rooms/${enc(roomId)}/joined_members`, undefined, {
        signal: this.signal,
      });
      count = Object.keys(res.joined ?? {}).length;
      keep(this.members, roomId, count);
    }
    return count <= 2;
  }

  membershipChanged(roomId: string): void {
    this.members.delete(roomId);
  }

  markEncrypted(roomId: string): void {
    this.encrypted.add(roomId);
  }

  isEncrypted(roomId: string): boolean {
    return this.encrypted.has(roomId);
  }

  /** True the first time only: the "encrypted room refused" line is logged once per room. */
  firstWarning(roomId: string): boolean {
    if (this.warned.has(roomId)) return false;
    this.warned.add(roomId);
    return true;
  }

  noteSender(eventId: string, sender: string): void {
    keep(this.senders, eventId, sender);
  }

  /** The sender of an event of the room (the bot's own sends are noted as they go). */
  async senderOf(roomId: string, eventId: string): Promise<string | undefined> {
    const known = this.senders.get(eventId);
    if (known) return known;
    try {
      const ev = await this.client.call<{ sender?: string }>('GET', `/rooms/${enc(roomId)}/event/${enc(eventId)}`, undefined, { signal: this.signal });
      if (typeof ev.sender === 'string') keep(this.senders, eventId, ev.sender);
      return ev.sender;
    } catch {
      // Not visible to the bot (redacted, before it joined): not a reply to the bot.
      return undefined;
    }
  }
}

function keep<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > MAX_KEPT) map.delete(map.keys().next().value!);
}
