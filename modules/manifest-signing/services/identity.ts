/**
 * The node identity: an Ed25519 key pair generated on first start under $TALON_HOME/identity (private key file
 * mode 0600, never served), loaded on later starts.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface NodeIdentity {
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** Hex of the raw 32-byte public key. */
  publicHex: string;
}

export function rawPublicHex(key: KeyObject): string {
  const der = key.export({ type: 'spki', format: 'der' });
  return der.subarray(der.length - 32).toString('hex');
}

/** A raw 32-byte Ed25519 public key (hex) as a KeyObject. */
export function publicKeyFromHex(hex: string): KeyObject {
  const prefix = Buffer.from('302a300506032b6570032100', 'hex');
  return createPublicKey({ key: Buffer.concat([prefix, Buffer.from(hex, 'hex')]), format: 'der', type: 'spki' });
}

export function loadOrCreateIdentity(dir: string): NodeIdentity {
  const file = path.join(dir, 'node_ed25519.pem');
  let privateKey: KeyObject;
  if (existsSync(file)) privateKey = createPrivateKey(readFileSync(file));
  else {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const made = String(generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }));
    privateKey = createPrivateKey(storeOnce(file, made));
  }
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new Error(`${file} is not an Ed25519 private key`);
  const publicKey = createPublicKey(privateKey);
  return { privateKey, publicKey, publicHex: rawPublicHex(publicKey) };
}

/**
 * Writes `content` to `file` unless it exists, and returns what the file holds. Processes starting together on one
 * home race here: the content is written whole to a temporary name and linked into place (atomic, refused when the
 * file exists), so no process reads a half-written key and the first one's key is everyone's.
 */
export function storeOnce(file: string, content: string): string {
  const temp = `${file}.${randomUUID()}.tmp`;
  writeFileSync(temp, content, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(temp, file);
    return content;
  } catch (err) {
    if ((err as { code?: string }).code !== 'EEXIST') throw err;
    return readFileSync(file, 'utf8');
  } finally {
    rmSync(temp, { force: true });
  }
}
