/**
 * Pairing codes and paired devices. Codes and device tokens are random, kept only as SHA-256 hashes, and compared
 * by hash lookup (a hash of a random 32-byte secret leaks nothing about other secrets, so no timing matters).
 * Every request with a device token is checked, so the devices' token hashes are kept in memory: loaded at start,
 * changed with each write here, and read again when another process sharing the home pairs or removes a device.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { badRequest, HttpError, notFound, WriteBehind, type Queries, type Store } from '@talon/module-sdk';
import type { DevicePrincipal } from '@talon/pairing';
import type { PairingConfig } from '../config.ts';

export interface DeviceRow {
  id: string;
  display_name: string;
  platform: string;
  token_hash: string;
  push_token: string | null;
  role: 'user';
  paired_at: string;
  last_seen: string;
}

/** The change-feed topic of the devices table (key: the device id). */
export const DEVICES_TOPIC = 'devices';

const digest = (secret: string) => createHash('sha256').update(secret).digest('hex');
const gone = (message: string) => new HttpError(410, message);

/** A device as the API shows it (never its token or push token). */
export const deviceView = (d: DeviceRow) => ({
  id: d.id,
  device_id: d.id,
  display_name: d.display_name,
  platform: d.platform,
  role: d.role,
  paired_at: d.paired_at,
  last_seen: d.last_seen,
  push: d.push_token !== null,
});

export class Devices {
  /** token hash → device id, for every paired device. */
  private byToken = new Map<string, string>();
  /** A device's use, recorded after the answer (one transaction for a burst of requests). */
  private readonly seen: WriteBehind<{ id: string; at: string }>;

  constructor(
    private readonly store: Store,
    private readonly config: () => PairingConfig,
    /** Notes a change of the devices for the other processes, inside the writing transaction. */
    private readonly noteChange: (t: Queries, id: string) => Promise<void>,
    log: Logger,
  ) {
    this.seen = new WriteBehind(
      store,
      (t, use) => t.run('UPDATE pairing_devices SET last_seen = ? WHERE id = ?', [use.at, use.id]),
      (err) => log.warn({ err }, "could not record a device's last use"),
    );
  }

  /** Reads the token hashes (start, and when another process changed the devices). */
  async load(): Promise<void> {
    const rows = await this.store.many<{ id: string; token_hash: string }>('SELECT id, token_hash FROM pairing_devices');
    this.byToken = new Map(rows.map((r) => [r.token_hash, r.id]));
  }

  /** Writes the uses not yet recorded (stop). */
  flush(): Promise<void> {
    return this.seen.flush();
  }

  newCode(): Promise<{ pairing_code: string; expires_at: string }> {
    const now = Date.now();
    // One transaction: two processes asked at once count each other's codes against max_pending_codes.
    return this.store.tx(async (t) => {
      await t.run('DELETE FROM pairing_codes WHERE expires_at <= ?', [now]);
      const live = (await t.one<{ n: number }>('SELECT COUNT(*) AS n FROM pairing_codes'))!.n;
      if (live >= this.config().max_pending_codes) throw badRequest(`${live} pairing codes are still open; use one or wait until they expire`);
      const code = randomBytes(32).toString('hex');
      const expires = now + this.config().code_ttl_secs * 1000;
      await t.run('INSERT INTO pairing_codes (code_hash, expires_at, created_at) VALUES (?, ?, ?)', [digest(code), expires, new Date(now).toISOString()]);
      return { pairing_code: code, expires_at: new Date(expires).toISOString() };
    });
  }

  /** Uses the code up and records the device, in one transaction (a code refused at the device limit stays open); the token is returned once. */
  async complete(input: { code: string; display_name: string; platform: string; push_token?: string }): Promise<{ device: DeviceRow; token: string }> {
    const token = `tdev_${randomBytes(32).toString('hex')}`;
    const now = new Date().toISOString();
    const device: DeviceRow = {
      id: randomUUID(),
      display_name: input.display_name,
      platform: input.platform,
      token_hash: digest(token),
      push_token: input.push_token ?? null,
      role: 'user',
      paired_at: now,
      last_seen: now,
    };
    await this.store.tx(async (t) => {
      const used = await t.one<{ expires_at: number }>('DELETE FROM pairing_codes WHERE code_hash = ? RETURNING expires_at', [digest(input.code)]);
      if (!used || used.expires_at <= Date.now()) throw gone('pairing code unknown, used or expired: request a new one');
      const count = (await t.one<{ n: number }>('SELECT COUNT(*) AS n FROM pairing_devices'))!.n;
      if (count >= this.config().max_devices) throw gone(`${count} devices are paired already ([pairing] max_devices): remove one first`);
      await t.run(
        'INSERT INTO pairing_devices (id, display_name, platform, token_hash, push_token, role, paired_at, last_seen) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        [device.id, device.display_name, device.platform, device.token_hash, device.push_token, device.role, device.paired_at, device.last_seen],
      );
      await this.noteChange(t, device.id);
    });
    this.byToken.set(device.token_hash, device.id);
    return { device, token };
  }

  async list(): Promise<DeviceRow[]> {
    await this.seen.flush();
    return this.store.many<DeviceRow>('SELECT * FROM pairing_devices ORDER BY paired_at, id');
  }

  async remove(id: string): Promise<void> {
    const removed = await this.store.tx(async (t) => {
      const { changes } = await t.run('DELETE FROM pairing_devices WHERE id = ?', [id]);
      if (changes === 1) await this.noteChange(t, id);
      return changes === 1;
    });
    if (!removed) throw notFound(`device '${id}' not found`);
    for (const [hash, device] of this.byToken) if (device === id) this.byToken.delete(hash);
  }

  authenticate(headers: Record<string, string | string[] | undefined>): DevicePrincipal | undefined {
    if (!this.config().enabled) return undefined;
    const header = headers.authorization;
    const token = typeof header === 'string' ? /^Bearer[ \t]+(tdev_[0-9a-f]{64})\s*$/i.exec(header)?.[1] : undefined;
    if (!token) return undefined;
    const id = this.byToken.get(digest(token));
    if (!id) return undefined;
    this.seen.push({ id, at: new Date().toISOString() });
    return { subject: `device:${id}`, role: 'user', via: 'device', deviceId: id };
  }
}
