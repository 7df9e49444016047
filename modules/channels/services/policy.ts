/**
 * Who reaches the agent: the access policy (dm_policy, group_policy, allowed_users) and a per-sender rate limit.
 * Pure decisions; the pairing codes and approved senders are rows (see pairing.ts).
 */
import type { InboundMessage } from '@talon/channels';
import type { CommonSettings } from './settings.ts';

export type Refusal = 'dm_disabled' | 'not_allowed' | 'pairing' | 'group_disabled' | 'not_mentioned' | 'rate_limited';

/** undefined: admitted; else why not. `approved`: the sender was paired before. */
export function refusal(m: InboundMessage, s: CommonSettings, approved: boolean): Refusal | undefined {
  if (s.allowed_users.includes(m.senderId)) return undefined;
  if (m.isGroup) {
    if (s.group_policy === 'disabled') return 'group_disabled';
    if (s.group_policy === 'mention' && !m.mentioned) return 'not_mentioned';
    return undefined;
  }
  if (s.dm_policy === 'disabled') return 'dm_disabled';
  if (s.dm_policy === 'open') return undefined;
  if (s.dm_policy === 'allowlist') return 'not_allowed';
  return approved ? undefined : 'pairing';
}

/** A sliding one-minute window per (channel, sender), swept as it is used; capped so senders cannot grow it forever. */
export class SenderRateLimit {
  private readonly hits = new Map<string, number[]>();

  constructor(
    private readonly perMinute: () => number,
    private readonly maxKeys = 100_000,
  ) {}

  /** True when the sender may go on (and counts this message). */
  take(channel: string, sender: string, now = Date.now()): boolean {
    const key = `${channel}\u0000${sender}`;
    const recent = (this.hits.get(key) ?? []).filter((t) => t > now - 60_000);
    if (recent.length >= this.perMinute()) {
      this.hits.set(key, recent);
      return false;
    }
    recent.push(now);
    this.hits.delete(key);
    if (this.hits.size >= this.maxKeys) this.hits.delete(this.hits.keys().next().value!);
    this.hits.set(key, recent);
    return true;
  }
}
