/** dm_policy = pairing: an unknown sender gets a one-time code; the owner approves it; approved senders are kept. */
import { randomInt } from 'node:crypto';
import { lockInTransaction, type Store } from '@talon/module-sdk';

export interface PairingRequest {
  code: string;
  channel: string;
  sender_id: string;
  sender_name: string | null;
  created_at: number;
  expires_at: number;
}

const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

export class Pairing {
  constructor(
    private readonly store: Store,
    private readonly ttlMs: () => number,
  ) {}

  async approved(channel: string, sender: string): Promise<boolean> {
    return Boolean(await this.store.one('SELECT 1 AS x FROM channels_senders WHERE channel = ? AND sender_id = ?', [channel, sender]));
  }

  /** The sender's code waiting for approval, made when there is none (or it expired); `fresh` when just made. */
  async request(channel: string, sender: string, name?: string): Promise<{ code: string; fresh: boolean }> {
    const now = Date.now();
    return this.store.tx(async (t) => {
      // Two messages of one sender at once get one code: PostgreSQL runs transactions side by side, so the sender's
      // lookup and write hold its lock until the commit (SQLite runs one writing transaction at a time anyway).
      await lockInTransaction(t, `channels:pairing:${channel}:${sender}`);
      const open = await t.one<{ code: string }>('SELECT code FROM channels_pairing WHERE channel = ? AND sender_id = ? AND expires_at > ?', [
        channel,
        sender,
        now,
      ]);
      if (open) return { code: open.code, fresh: false };
      await t.run('DELETE FROM channels_pairing WHERE channel = ? AND sender_id = ?', [channel, sender]);
      const code = Array.from({ length: 8 }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');
      await t.run('INSERT INTO channels_pairing (code, channel, sender_id, sender_name, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)', [
        code,
        channel,
        sender,
        name ?? null,
        now,
        now + this.ttlMs(),
      ]);
      return { code, fresh: true };
    });
  }

  list(channel: string): Promise<PairingRequest[]> {
    return this.store.many<PairingRequest>('SELECT * FROM channels_pairing WHERE channel = ? AND expires_at > ? ORDER BY created_at', [channel, Date.now()]);
  }

  /** Approves a waiting code (used once); the sender it names is remembered. Undefined for an unknown or expired code. */
  async approve(channel: string, code: string): Promise<string | undefined> {
    return this.store.tx(async (t) => {
      const row = await t.one<PairingRequest>('SELECT * FROM channels_pairing WHERE channel = ? AND code = ? AND expires_at > ?', [
        channel,
        code.toUpperCase(),
        Date.now(),
      ]);
      if (!row) return undefined;
      await t.run('DELETE FROM channels_pairing WHERE code = ?', [row.code]);
      await t.run('INSERT INTO channels_senders (channel, sender_id, approved_at) VALUES (?, ?, ?) ON CONFLICT (channel, sender_id) DO NOTHING', [
        channel,
        row.sender_id,
        Date.now(),
      ]);
      return row.sender_id;
    });
  }

  /** Drops a waiting code without admitting its sender; false for an unknown or expired code. */
  async reject(channel: string, code: string): Promise<boolean> {
    const { changes } = await this.store.run('DELETE FROM channels_pairing WHERE channel = ? AND code = ? AND expires_at > ?', [
      channel,
      code.toUpperCase(),
      Date.now(),
    ]);
    return changes > 0;
  }
}
