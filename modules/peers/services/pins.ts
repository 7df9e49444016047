/**
 * Trust on first use: the first key a node id shows is pinned; a different key later is refused. The handshake asks
 * synchronously, between two frames, so the pins are kept in memory: loaded at start, and read again when another
 * process sharing the home pins a node. A pin is written after the check that made it; its verification time is
 * written behind.
 */
import type { Logger } from 'pino';
import { WriteBehind, type Queries, type Store } from '@talon/module-sdk';
import { fingerprintOf } from './identity.ts';

export type PinVerdict = { ok: true; firstContact: boolean } | { ok: false; reason: string };

/** The change-feed topic of the pins (key: the node id). */
export const PINS_TOPIC = 'pins';

interface Pin {
  public_key: string;
  fingerprint: string;
}

export class Pins {
  private pinned = new Map<string, Pin>();
  private readonly verified: WriteBehind<{ nodeId: string; address: string; at: string }>;

  constructor(
    private readonly store: Store,
    /** Notes a new pin for the other processes, inside the writing transaction. */
    private readonly noteChange: (t: Queries, nodeId: string) => Promise<void>,
    private readonly log: Logger,
  ) {
    this.verified = new WriteBehind(
      store,
      (t, v) => t.run('UPDATE peers_identities SET last_verified = ?, address = ? WHERE node_id = ?', [v.at, v.address, v.nodeId]),
      (err) => log.warn({ err }, 'could not record when peer identities were verified'),
    );
  }

  /** Reads every pin (start). */
  async load(): Promise<void> {
    const rows = await this.store.many<Pin & { node_id: string }>('SELECT node_id, public_key, fingerprint FROM peers_identities');
    this.pinned = new Map(rows.map((r) => [r.node_id, { public_key: r.public_key, fingerprint: r.fingerprint }]));
  }

  /**
   * Another process pinned this node (or this one lost a race to pin it first): its pin as stored. '' (notes may have
   * been missed): every pin.
   */
  async heard(nodeId: string): Promise<void> {
    if (!nodeId) return this.load();
    const row = await this.store.one<Pin>('SELECT public_key, fingerprint FROM peers_identities WHERE node_id = ?', [nodeId]);
    if (row) this.pinned.set(nodeId, row);
    else this.pinned.delete(nodeId);
  }

  /** Writes the verification times not yet recorded (stop). */
  flush(): Promise<void> {
    return this.verified.flush();
  }

  check(nodeId: string, publicKey: string, address: string): PinVerdict {
    const now = new Date().toISOString();
    const pinned = this.pinned.get(nodeId);
    if (!pinned) {
      const pin = { public_key: publicKey, fingerprint: fingerprintOf(publicKey) };
      this.pinned.set(nodeId, pin);
      void this.pin(nodeId, pin, address, now);
      return { ok: true, firstContact: true };
    }
    if (pinned.public_key !== publicKey) {
      return {
        ok: false,
        reason: `node '${nodeId}' presented identity ${fingerprintOf(publicKey).slice(0, 16)}…, but ${pinned.fingerprint.slice(0, 16)}… is pinned`,
      };
    }
    this.verified.push({ nodeId, address, at: now });
    return { ok: true, firstContact: false };
  }

  count(): number {
    return this.pinned.size;
  }

  /**
   * Records a first contact. Another process sharing the home may have pinned the node meanwhile: the stored pin
   * wins (the insert yields to it), and this process takes it for the next handshakes.
   */
  private async pin(nodeId: string, pin: Pin, address: string, at: string): Promise<void> {
    try {
      const stored = await this.store.tx(async (t) => {
        const { changes } = await t.run(
          'INSERT INTO peers_identities (node_id, public_key, fingerprint, address, first_seen, last_verified) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (node_id) DO NOTHING',
          [nodeId, pin.public_key, pin.fingerprint, address, at, at],
        );
        if (changes === 1) await this.noteChange(t, nodeId);
        return changes === 1;
      });
      if (stored) return;
      await this.heard(nodeId);
      if (this.pinned.get(nodeId)?.public_key !== pin.public_key)
        this.log.warn({ node: nodeId }, 'another process pinned a different identity for this node first; it is the one checked from now on');
    } catch (err) {
      // Not stored: the next contact pins it again.
      this.pinned.delete(nodeId);
      this.log.warn({ err, node: nodeId }, 'could not store a pinned peer identity');
    }
  }
}
