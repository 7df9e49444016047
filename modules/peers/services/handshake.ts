/**
 * Admission of a peer connection. Both sides send a hello (node id, Ed25519 identity key, an ephemeral X25519 key and
 * a fresh nonce). The transcript hash covers all of it; each side proves the shared secret with
 * HMAC-SHA256(secret, role | transcript) and its identity with an Ed25519 signature over the same input. The
 * ephemeral keys give each connection its own AES keys (HKDF over the X25519 secret, salted with the transcript).
 */
import {
  createHash,
  createHmac,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  hkdfSync,
  randomBytes,
  sign,
  timingSafeEqual,
  verify,
  type KeyObject,
} from 'node:crypto';
import type { Identity } from './identity.ts';

export const PROTOCOL = 'talon-peer/1';

export interface Hello {
  type: 'hello';
  protocol: string;
  node_id: string;
  node_name: string;
  public_key: string;
  ephemeral: string;
  nonce: string;
}

export interface Proof {
  hmac: string;
  signature: string;
}

export type Role = 'initiator' | 'responder';

export interface Ephemeral {
  hello: Hello;
  privateKey: KeyObject;
}

export function makeHello(identity: Identity): Ephemeral {
  const pair = generateKeyPairSync('x25519');
  return {
    privateKey: pair.privateKey,
    hello: {
      type: 'hello',
      protocol: PROTOCOL,
      node_id: identity.nodeId,
      node_name: identity.nodeName,
      public_key: identity.publicKey,
      ephemeral: pair.publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
      nonce: randomBytes(32).toString('hex'),
    },
  };
}

/** A hello from the wire, checked for shape; undefined when it is not one. */
export function asHello(value: unknown): Hello | undefined {
  const h = value as Partial<Hello> | null;
  const str = (v: unknown, max: number) => typeof v === 'string' && v.length > 0 && v.length <= max;
  if (!h || h.type !== 'hello' || h.protocol !== PROTOCOL) return undefined;
  if (!str(h.node_id, 128) || !str(h.node_name, 128) || !str(h.public_key, 200) || !str(h.ephemeral, 200) || !/^[0-9a-f]{64}$/.test(String(h.nonce)))
    return undefined;
  return h as Hello;
}

export function transcript(initiator: Hello, responder: Hello): Buffer {
  const parts = [
    PROTOCOL,
    initiator.node_id,
    responder.node_id,
    initiator.nonce,
    responder.nonce,
    initiator.public_key,
    responder.public_key,
    initiator.ephemeral,
    responder.ephemeral,
  ];
  return createHash('sha256').update(parts.join('|')).digest();
}

const proofInput = (role: Role, t: Buffer) => Buffer.concat([Buffer.from(`${role}|`), t]);
const hmacOf = (secret: string, role: Role, t: Buffer) => createHmac('sha256', secret).update(proofInput(role, t)).digest();

export function prove(secret: string, identity: Identity, role: Role, t: Buffer): Proof {
  return { hmac: hmacOf(secret, role, t).toString('hex'), signature: sign(null, proofInput(role, t), identity.privateKey).toString('base64') };
}

/** Why the other side's proof fails, or undefined when it holds. The HMAC is checked first, in constant time. */
export function proofProblem(secret: string, peer: Hello, role: Role, t: Buffer, proof: Partial<Proof> | undefined): string | undefined {
  const given = Buffer.from(typeof proof?.hmac === 'string' ? proof.hmac : '', 'hex');
  const expected = hmacOf(secret, role, t);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'shared-secret HMAC does not match';
  try {
    const key = createPublicKey({ key: Buffer.from(peer.public_key, 'base64'), format: 'der', type: 'spki' });
    if (key.asymmetricKeyType !== 'ed25519') return 'identity key is not Ed25519';
    if (!verify(null, proofInput(role, t), key, Buffer.from(String(proof?.signature ?? ''), 'base64'))) return 'identity signature does not verify';
  } catch {
    return 'identity key or signature is malformed';
  }
  return undefined;
}

/** The two AES-256 keys of the connection: [initiator → responder, responder → initiator]. */
export function sessionKeys(mine: KeyObject, peerEphemeral: string, t: Buffer): [Buffer, Buffer] {
  const theirs = createPublicKey({ key: Buffer.from(peerEphemeral, 'base64'), format: 'der', type: 'spki' });
  const shared = diffieHellman({ privateKey: mine, publicKey: theirs });
  const key = (info: string) => Buffer.from(hkdfSync('sha256', shared, t, `${PROTOCOL} ${info}`, 32));
  return [key('initiator->responder'), key('responder->initiator')];
}
