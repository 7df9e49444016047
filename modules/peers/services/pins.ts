/** Trust on first use: the first key a node id shows is pinned; a different key later is refused. */
import type { Database } from 'better-sqlite3';
import { statements } from '@talon/module-sdk';
import { fingerprintOf } from './identity.ts';

export type PinVerdict = { ok: true; firstContact: boolean } | { ok: false; reason: string };

export class Pins {
  private readonly sql;

  constructor(db: Database) {
    this.sql = statements(db);
  }

  check(nodeId: string, publicKey: string, address: string): PinVerdict {
    const now = new Date().toISOString();
    const pinned = this.sql<[string], { public_key: string; fingerprint: string }>(
      'SELECT public_key, fingerprint FROM peers_identities WHERE node_id = ?',
    ).get(nodeId);
    if (!pinned) {
      this.sql('INSERT INTO peers_identities (node_id, public_key, fingerprint, address, first_seen, last_verified) VALUES (?, ?, ?, ?, ?, ?)').run(
        nodeId,
        publicKey,
        fingerprintOf(publicKey),
        address,
        now,
        now,
      );
      return { ok: true, firstContact: true };
    }
    if (pinned.public_key !== publicKey) {
      return {
        ok: false,
        reason: `node '${nodeId}' presented identity ${fingerprintOf(publicKey).slice(0, 16)}…, but ${pinned.fingerprint.slice(0, 16)}… is pinned`,
      };
    }
    this.sql('UPDATE peers_identities SET last_verified = ?, address = ? WHERE node_id = ?').run(now, address, nodeId);
    return { ok: true, firstContact: false };
  }

  count(): number {
    return this.sql<[], { n: number }>('SELECT count(*) AS n FROM peers_identities').get()!.n;
  }
}
