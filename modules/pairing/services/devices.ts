/**
 * Pairing codes and paired devices. Codes and device tokens are random, kept only as SHA-256 hashes, and compared
 * by hash lookup (a hash of a random 32-byte secret leaks nothing about other secrets, so no timing matters).
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { badRequest, HttpError, notFound, statements } from '@talon/module-sdk';
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
  private readonly sql;

  constructor(
    private readonly db: Database,
    private readonly config: () => PairingConfig,
  ) {
    this.sql = statements(db);
  }

  newCode(): { pairing_code: string; expires_at: string } {
    const now = Date.now();
    this.sql('DELETE FROM pairing_codes WHERE expires_at <= ?').run(now);
    const live = this.sql<[], { n: number }>('SELECT count(*) AS n FROM pairing_codes').get()!.n;
    if (live >= this.config().max_pending_codes) throw badRequest(`${live} pairing codes are still open; use one or wait until they expire`);
    const code = randomBytes(32).toString('hex');
    const expires = now + this.config().code_ttl_secs * 1000;
    this.sql('INSERT INTO pairing_codes (code_hash, expires_at, created_at) VALUES (?, ?, ?)').run(digest(code), expires, new Date(now).toISOString());
    return { pairing_code: code, expires_at: new Date(expires).toISOString() };
  }

  /** Uses the code up (whatever happens next) and records the device; its token is returned once. */
  complete(input: { code: string; display_name: string; platform: string; push_token?: string }): { device: DeviceRow; token: string } {
    return this.db.transaction(() => {
      const used = this.sql<[string], { expires_at: number }>('DELETE FROM pairing_codes WHERE code_hash = ? RETURNING expires_at').get(digest(input.code));
      if (!used || used.expires_at <= Date.now()) throw gone('pairing code unknown, used or expired: request a new one');
      const count = this.sql<[], { n: number }>('SELECT count(*) AS n FROM pairing_devices').get()!.n;
      if (count >= this.config().max_devices) throw gone(`${count} devices are paired already ([pairing] max_devices): remove one first`);
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
      this.sql(
        'INSERT INTO pairing_devices (id, display_name, platform, token_hash, push_token, role, paired_at, last_seen) VALUES (@id, @display_name, @platform, @token_hash, @push_token, @role, @paired_at, @last_seen)',
      ).run(device);
      return { device, token };
    })();
  }

  list(): DeviceRow[] {
    return this.sql<[], DeviceRow>('SELECT * FROM pairing_devices ORDER BY paired_at, id').all();
  }

  remove(id: string): void {
    if (this.sql('DELETE FROM pairing_devices WHERE id = ?').run(id).changes !== 1) throw notFound(`device '${id}' not found`);
  }

  authenticate(headers: Record<string, string | string[] | undefined>): DevicePrincipal | undefined {
    if (!this.config().enabled) return undefined;
    const header = headers.authorization;
    const token = typeof header === 'string' ? /^Bearer[ \t]+(tdev_[0-9a-f]{64})\s*$/i.exec(header)?.[1] : undefined;
    if (!token) return undefined;
    const device = this.sql<[string], { id: string }>('SELECT id FROM pairing_devices WHERE token_hash = ?').get(digest(token));
    if (!device) return undefined;
    this.sql('UPDATE pairing_devices SET last_seen = ? WHERE id = ?').run(new Date().toISOString(), device.id);
    return { subject: `device:${device.id}`, role: 'user', via: 'device', deviceId: device.id };
  }
}
