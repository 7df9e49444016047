/**
 * The node identity: an Ed25519 key pair generated on first start under $TALON_HOME/identity (private key file
 * mode 0600, never served), loaded on later starts.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { readOrCreateOnce } from '@talon/module-sdk';

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
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // Processes starting together on one home (or a fleet's data directory) end up with one key.
  const privateKey = createPrivateKey(readOrCreateOnce(file, () => String(generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }))));
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new Error(`${file} is not an Ed25519 private key`);
  const publicKey = createPublicKey(privateKey);
  return { privateKey, publicKey, publicHex: rawPublicHex(publicKey) };
}
