/**
 * AES-256-GCM sealing of secrets at rest. The key is 32 random bytes in one file shared by every process of a home
 * (`TALON_SECRET_KEY_FILE`, else <home>/secret.key, mode 0600), created by whichever process needs it first. The
 * associated data binds each ciphertext to its owner (e.g. the provider name), so a stored value cannot be moved to
 * another row. A check value sealed once in the database tells at start whether the key is the one the database's
 * values were sealed with.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, type Store } from '@talon/module-sdk';
import type { SecretVault } from '../api.ts';

const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
const VERSION = 'v1';

/**
 * The check value: a known text sealed under its own owner (no provider or row is named like it). The owner keeps the
 * name it had when the vault lived in the catalog: a home made then has its check value sealed under it.
 */
const CHECK_OWNER = 'catalog:key-check';
const CHECK_PLAIN = 'talon secret key check';

/** Where the key is: TALON_SECRET_KEY_FILE (a fleet's shared key), else the home's secret.key. */
export function secretKeyFile(home: string, env: NodeJS.ProcessEnv = process.env): string {
  const given = env.TALON_SECRET_KEY_FILE?.trim();
  return given ? path.resolve(given) : path.join(home, 'secret.key');
}

const isErrno = (err: unknown, code: string) => (err as NodeJS.ErrnoException)?.code === code;

/**
 * Creates the key file exclusively, complete or not at all: the key is written to a file of this process's own, then
 * linked to the final name, which fails when the name exists. So of two processes starting together one creates it
 * and the other reads that key (never a half-written file, as a plain 'wx' open could show it). Where links are
 * unsupported, an exclusive 'wx' open does the same with that small window.
 */
function createKeyFile(file: string): void {
  const key = randomBytes(KEY_BYTES);
  const own = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(own, key, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(own, file);
  } catch (err) {
    if (isErrno(err, 'EEXIST')) return;
    if (!isErrno(err, 'EPERM') && !isErrno(err, 'ENOTSUP') && !isErrno(err, 'ENOSYS')) throw err;
    try {
      writeFileSync(file, key, { mode: 0o600, flag: 'wx' });
    } catch (inner) {
      if (!isErrno(inner, 'EEXIST')) throw inner;
    }
  } finally {
    unlinkSync(own);
  }
}

export class SecretBox implements SecretVault {
  private key?: Buffer;

  constructor(readonly file: string) {}

  /** The key: read from the file, which is created first when no process has made it yet. */
  private secretKey(): Buffer {
    if (this.key) return this.key;
    let key: Buffer;
    try {
      key = readFileSync(this.file);
    } catch (err) {
      if (!isErrno(err, 'ENOENT')) throw err;
      createKeyFile(this.file);
      key = readFileSync(this.file);
    }
    if (key.length !== KEY_BYTES) throw new Error(`${this.file} is not a ${KEY_BYTES}-byte key (${key.length} bytes)`);
    this.key = key;
    return key;
  }

  seal(plain: string, owner: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.secretKey(), iv);
    cipher.setAAD(Buffer.from(owner));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
  }

  /** Throws when the value was not sealed for this owner with this key. */
  open(sealed: string, owner: string): string {
    const [version, data] = sealed.split(':', 2);
    if (version !== VERSION || !data) throw new Error('unknown sealed-secret format');
    const raw = Buffer.from(data, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.secretKey(), raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(owner));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  }

  /**
   * The key against the database: the first process to get here writes the check value (sealed with its key; a
   * second writer's row is dropped by ON CONFLICT DO NOTHING), and every start reads it back. A key that does not
   * open it is refused as a configuration error, so start-up stops instead of sealing new values with a second key.
   */
  async verify(store: Store): Promise<void> {
    const sealed = this.seal(CHECK_PLAIN, CHECK_OWNER);
    await store.run('INSERT INTO secrets_key_check (id, sealed, created_at) VALUES (1, ?, ?) ON CONFLICT (id) DO NOTHING', [sealed, new Date().toISOString()]);
    const row = await store.one<{ sealed: string }>('SELECT sealed FROM secrets_key_check WHERE id = 1');
    if (!row || !this.opens(row.sealed))
      throw new ConfigError(
        `the secret key ${this.file} does not open the values sealed in this database: it is not the key they were sealed with ` +
          '(give the right key file, or set TALON_SECRET_KEY_FILE to it; see docs/security.md, "The secret key")',
      );
  }

  private opens(sealed: string): boolean {
    try {
      return this.open(sealed, CHECK_OWNER) === CHECK_PLAIN;
    } catch {
      return false;
    }
  }
}
