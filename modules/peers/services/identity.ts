/**
 * This node's identity: a node id (configured, or generated once) and an Ed25519 key pair kept in the module's
 * data folder (mode 0600). Peers pin the public key to the node id on first contact.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { readOrCreateOnce } from '@talon/module-sdk';

export interface Identity {
  nodeId: string;
  nodeName: string;
  privateKey: KeyObject;
  /** SPKI DER, base64: what peers pin. */
  publicKey: string;
  fingerprint: string;
}

export const fingerprintOf = (publicKey: string) => createHash('sha256').update(Buffer.from(publicKey, 'base64')).digest('hex');

export function loadIdentity(dir: string, configured: { nodeId: string; nodeName: string }): Identity {
  mkdirSync(dir, { recursive: true });
  const pem = readOrCreateOnce(path.join(dir, 'identity.pem'), () =>
    generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  );
  const privateKey = createPrivateKey(pem);
  const publicKey = createPublicKey(privateKey).export({ type: 'spki', format: 'der' }).toString('base64');
  const nodeId = configured.nodeId || readOrCreateOnce(path.join(dir, 'node-id'), () => randomUUID()).trim();
  return { nodeId, nodeName: configured.nodeName || hostname(), privateKey, publicKey, fingerprint: fingerprintOf(publicKey) };
}
