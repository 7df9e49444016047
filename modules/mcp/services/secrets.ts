/**
 * AES-256-GCM sealing of MCP credentials at rest (environment values and
 * header values of stored servers). The key is 32 random bytes in the
 * module's data folder (mode 0600), made on first use; the associated data
 * binds each ciphertext to its server id, so a sealed value cannot be moved
 * to another row.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';

const IV_BYTES = 12;
const TAG_BYTES = 16;
const VERSION = 'v1';

export class SecretBox {
  private key?: Buffer;

  constructor(private readonly file: () => string) {}

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

  private secretKey(): Buffer {
    if (this.key) return this.key;
    const file = this.file();
    let key: Buffer;
    try {
      key = randomBytes(32);
      writeFileSync(file, key, { mode: 0o600, flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      key = readFileSync(file);
    }
    if (key.length !== 32) throw new Error(`${file} is not a 32-byte key (${key.length} bytes)`);
    this.key = key;
    return key;
  }
}
