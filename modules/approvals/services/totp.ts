/**
 * The operator's TOTP second factor: enrollment (secret sealed in the service vault, not active until confirmed),
 * verification with replay refusal (an accepted time step and every earlier one are refused afterwards), a lockout
 * after repeated failures (one count for every purpose), and single-use recovery codes stored as SHA-256 hashes and compared in constant time.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { badRequest, lockInTransaction, tooManyRequests, type Store } from '@talon/module-sdk';
import type { SecretVault } from '@talon/secrets';

/** 6 digits, 30 s steps, SHA-1: what every authenticator app does by default. One step of clock skew either way. */
const SKEW_SECONDS = 30;
export const MAX_FAILURES = 5;
export const LOCKOUT_SECONDS = 300;
/**
 * One failure count for every purpose: counted per purpose, an attacker would get MAX_FAILURES guesses at each of
 * approve, confirm, setup and revoke per lockout (the reference's users asked for a shared lockout).
 */
const LOCK_KEY = 'all';
const RECOVERY_CODES = 8;
const VAULT_OWNER = 'approvals:totp';

export type Purpose = 'approve' | 'confirm' | 'setup' | 'revoke';

interface Enrollment {
  secret: string;
  confirmed: number;
  recovery_hashes: string;
  last_step: number;
}

export interface TotpStatus {
  enrolled: boolean;
  confirmed: boolean;
  enforced: boolean;
  remaining_recovery_codes: number;
}

const hash = (code: string) => createHash('sha256').update(code.trim().toLowerCase()).digest();

function recoveryCode(): string {
  return (randomBytes(8).toString('hex').match(/.{4}/g) ?? []).join('-');
}

export class Totp {
  constructor(
    private readonly store: Store,
    private readonly vault: () => SecretVault,
    private readonly issuer: () => string,
  ) {}

  private enrollment(): Promise<Enrollment | undefined> {
    return this.store.one<Enrollment>('SELECT secret, confirmed, recovery_hashes, last_step FROM approvals_totp WHERE id = 1');
  }

  async status(enforced: boolean): Promise<TotpStatus> {
    const e = await this.enrollment();
    return {
      enrolled: e !== undefined,
      confirmed: e?.confirmed === 1,
      enforced,
      remaining_recovery_codes: e ? (JSON.parse(e.recovery_hashes) as string[]).length : 0,
    };
  }

  async isConfirmed(): Promise<boolean> {
    return (await this.enrollment())?.confirmed === 1;
  }

  /** A new secret and recovery codes, inactive until confirmed. A confirmed enrollment is replaced only with a valid current code. */
  async setup(currentCode: string | undefined): Promise<{ secret: string; otpauth_uri: string; qr_code: string; recovery_codes: string[] }> {
    const existing = await this.enrollment();
    if (existing?.confirmed === 1) {
      if (!currentCode) throw badRequest('TOTP is already enrolled: send current_code (a TOTP or recovery code) to replace it');
      await this.check('setup', currentCode, { recovery: true });
    }
    // otplib and qrcode are loaded when TOTP is first used (most services never enrol): both cost start-up time.
    const [{ generateSecret, generateURI }, { default: QRCode }] = await Promise.all([import('otplib'), import('qrcode')]);
    const secret = generateSecret();
    const otpauth_uri = generateURI({ issuer: this.issuer(), label: 'operator', secret });
    const recovery_codes = Array.from({ length: RECOVERY_CODES }, recoveryCode);
    const hashes = recovery_codes.map((c) => hash(c).toString('hex'));
    await this.store.run(
      `INSERT INTO approvals_totp (id, secret, confirmed, recovery_hashes, last_step, created_at) VALUES (1, ?, 0, ?, 0, ?)
       ON CONFLICT (id) DO UPDATE SET secret = excluded.secret, confirmed = 0, recovery_hashes = excluded.recovery_hashes, last_step = 0, created_at = excluded.created_at`,
      [this.vault().seal(secret, VAULT_OWNER), JSON.stringify(hashes), new Date().toISOString()],
    );
    return { secret, otpauth_uri, qr_code: await QRCode.toDataURL(otpauth_uri), recovery_codes };
  }

  async confirm(code: string): Promise<void> {
    const e = await this.enrollment();
    if (!e) throw badRequest('TOTP is not enrolled: POST /api/approvals/totp/setup first');
    if (e.confirmed === 1) throw badRequest('TOTP is already confirmed');
    await this.check('confirm', code, { recovery: false });
    await this.store.run('UPDATE approvals_totp SET confirmed = 1 WHERE id = 1');
  }

  async revoke(code: string): Promise<void> {
    if (!(await this.enrollment())) throw badRequest('TOTP is not enrolled');
    await this.check('revoke', code, { recovery: true });
    await this.store.run('DELETE FROM approvals_totp WHERE id = 1');
  }

  /** A valid, unused TOTP code of the confirmed enrollment, or 400. */
  async verifyForApproval(code: string | undefined): Promise<void> {
    if (!(await this.isConfirmed()))
      throw badRequest('second_factor = "totp" needs a confirmed TOTP enrollment: POST /api/approvals/totp/setup, then /confirm');
    if (!code) throw badRequest('totp_code is required: [approval] second_factor = "totp"');
    await this.check('approve', code, { recovery: false });
  }

  /** Verifies a TOTP code (or, where allowed, a recovery code, which is then used up); counts failures. */
  private async check(purpose: Purpose, code: string, options: { recovery: boolean }): Promise<void> {
    await this.refuseWhileLocked(purpose);
    const e = (await this.enrollment())!;
    const ok = /^\d{6}$/.test(code.trim()) ? await this.totpValid(e, code.trim()) : options.recovery && (await this.useRecoveryCode(e, code));
    if (!ok) {
      await this.fail();
      throw badRequest(options.recovery ? 'invalid TOTP or recovery code' : 'invalid or already used TOTP code');
    }
    await this.store.run('DELETE FROM approvals_totp_failures WHERE purpose = ?', [LOCK_KEY]);
  }

  private async totpValid(e: Enrollment, token: string): Promise<boolean> {
    const secret = this.vault().open(e.secret, VAULT_OWNER);
    const { verify } = await import('otplib');
    const result = await verify({ secret, token, epochTolerance: SKEW_SECONDS, afterTimeStep: e.last_step || undefined });
    if (!result.valid || !('timeStep' in result)) return false;
    // Replay refusal: this step and all before it are spent. The UPDATE is conditional so two concurrent uses of one code cannot both pass.
    const { changes } = await this.store.run('UPDATE approvals_totp SET last_step = ? WHERE id = 1 AND last_step < ?', [result.timeStep, result.timeStep]);
    return changes === 1;
  }

  private async useRecoveryCode(e: Enrollment, code: string): Promise<boolean> {
    const given = hash(code);
    const hashes = JSON.parse(e.recovery_hashes) as string[];
    let found = -1;
    // Every stored hash is compared, in constant time, whatever matched before.
    hashes.forEach((h, i) => {
      if (timingSafeEqual(Buffer.from(h, 'hex'), given) && found < 0) found = i;
    });
    if (found < 0) return false;
    const left = hashes.filter((_, i) => i !== found);
    // Conditional on the list read: of two concurrent uses of one code (two processes), one passes.
    const { changes } = await this.store.run('UPDATE approvals_totp SET recovery_hashes = ? WHERE id = 1 AND recovery_hashes = ?', [
      JSON.stringify(left),
      e.recovery_hashes,
    ]);
    return changes === 1;
  }

  private async refuseWhileLocked(purpose: Purpose): Promise<void> {
    const row = await this.store.one<{ locked_until: number }>('SELECT locked_until FROM approvals_totp_failures WHERE purpose = ?', [LOCK_KEY]);
    const wait = row ? Math.ceil((row.locked_until - Date.now()) / 1000) : 0;
    if (wait > 0) throw tooManyRequests(`too many invalid codes: the second factor is locked for ${wait} s (${purpose} refused)`, wait);
  }

  /** Counts a failure; the read and the write in one transaction, so failures in two processes both count. */
  private async fail(): Promise<void> {
    await this.store.tx(async (t) => {
      // PostgreSQL runs transactions side by side: the count is read and written under a lock, or two would count one.
      await lockInTransaction(t, `approvals:totp:${LOCK_KEY}`);
      const row = await t.one<{ failures: number }>('SELECT failures FROM approvals_totp_failures WHERE purpose = ?', [LOCK_KEY]);
      const failures = (row?.failures ?? 0) + 1;
      const locked = failures >= MAX_FAILURES ? Date.now() + LOCKOUT_SECONDS * 1000 : 0;
      await t.run(
        'INSERT INTO approvals_totp_failures (purpose, failures, locked_until) VALUES (?, ?, ?) ON CONFLICT (purpose) DO UPDATE SET failures = excluded.failures, locked_until = excluded.locked_until',
        [LOCK_KEY, locked ? 0 : failures, locked],
      );
    });
  }
}
