/**
 * One process runs a channel. Two service processes on one home would otherwise both start every adapter: both poll
 * Telegram (409s), both hold Discord and Slack sockets, both take webhooks. A channel's adapter runs only in the
 * process that holds its lease, a row of channels_leases (channel, node, expires_at) renewed while it runs; the other
 * processes are on standby and take the lease over once it expires or its node is no longer live.
 */
import type { NodeAccess, Store } from '@talon/module-sdk';

export class ChannelLeases {
  constructor(
    private readonly store: Store,
    private readonly nodes: Pick<NodeAccess, 'id' | 'leaseMs' | 'live' | 'active'>,
  ) {}

  /** This process's node id. */
  get node(): string {
    return this.nodes.id;
  }

  /**
   * Takes the channel's lease, or extends it when this node holds it: one statement, so of two processes one wins. A
   * lease is free when there is none, it expired, or its node is not live (killed, or stopped without releasing it).
   */
  async take(channel: string): Promise<boolean> {
    // A node that no longer beats is gone to the others, who take its claims over: it takes none again.
    if (!this.nodes.active) return false;
    const now = Date.now();
    const live = await this.nodes.live();
    if (!live.includes(this.nodes.id)) live.push(this.nodes.id);
    const { changes } = await this.store.run(
      `INSERT INTO channels_leases (channel, node, expires_at) VALUES (?, ?, ?)
       ON CONFLICT (channel) DO UPDATE SET node = excluded.node, expires_at = excluded.expires_at
       WHERE channels_leases.node = excluded.node OR channels_leases.expires_at < ? OR channels_leases.node NOT IN (${live.map(() => '?').join(', ')})`,
      [channel, this.nodes.id, now + this.nodes.leaseMs, now, ...live],
    );
    return changes === 1;
  }

  /** Extends a lease this node holds; false when another node has taken it (the adapter must stop at once). */
  async renew(channel: string): Promise<boolean> {
    const { changes } = await this.store.run('UPDATE channels_leases SET expires_at = ? WHERE channel = ? AND node = ?', [
      Date.now() + this.nodes.leaseMs,
      channel,
      this.nodes.id,
    ]);
    return changes === 1;
  }

  /** The node running the channel: the holder of an unexpired lease that is live; undefined when the lease is free. */
  async holder(channel: string): Promise<string | undefined> {
    const row = await this.store.one<{ node: string; expires_at: number }>('SELECT node, expires_at FROM channels_leases WHERE channel = ?', [channel]);
    if (!row || Number(row.expires_at) < Date.now()) return undefined;
    return row.node === this.nodes.id || (await this.nodes.live()).includes(row.node) ? row.node : undefined;
  }

  async release(channel: string): Promise<void> {
    await this.store.run('DELETE FROM channels_leases WHERE channel = ? AND node = ?', [channel, this.nodes.id]);
  }

  async releaseAll(): Promise<void> {
    await this.store.run('DELETE FROM channels_leases WHERE node = ?', [this.nodes.id]);
  }

  /**
   * Drops the leases of a node found dead and answers their channels, for a standby process to take them at once
   * rather than when they expire. Deleting, not expiring: a dead node that still beats its renewals (a stalled
   * process waking up) then finds its lease gone and stops its adapter.
   */
  async forget(node: string): Promise<string[]> {
    const rows = await this.store.many<{ channel: string }>('DELETE FROM channels_leases WHERE node = ? RETURNING channel', [node]);
    return rows.map((r) => r.channel);
  }
}
