/**
 * The approximate fleet limit ([rate_limit] fleet = "approximate", the default): each node keeps its own buckets and
 * enforces the limit divided by the live nodes, so N nodes together allow about the limit, not N times it. The
 * count is read in the background every few seconds, never per request; alone (one process, SQLite) it is 1 and the
 * limit is unchanged.
 */
import type { NodeAccess } from '@talon/module-sdk';

/** The longest a node goes without reading the count again; shorter when heartbeats are (a node's lease is 3 beats). */
export const MAX_REFRESH_MS = 5_000;

export const refreshEvery = (nodes: Pick<NodeAccess, 'leaseMs'>): number => Math.min(MAX_REFRESH_MS, nodes.leaseMs / 3);

export class FleetShare {
  private live = 1;

  constructor(private readonly nodes: Pick<NodeAccess, 'live'>) {}

  /** Reads the live nodes again (this one is always among them). */
  async refresh(): Promise<number> {
    this.live = Math.max(1, (await this.nodes.live()).length);
    return this.live;
  }

  /** This node's part of a fleet-wide rate. */
  share(ratePerSecond: number): number {
    return ratePerSecond / this.live;
  }
}
