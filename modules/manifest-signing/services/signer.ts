/**
 * Envelopes: Ed25519 over "talon-envelope:v1:<kind>:<content_hash>" (domain-separated, so an envelope for one
 * kind never verifies as another, and no other use of the node key can be replayed as an envelope). Verification
 * checks shape, kind, the hash against the content, the signature, and that the signer is trusted.
 */
import { createHash, sign as edSign, verify as edVerify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { EnvelopeKind, ManifestSigner, SignedEnvelope, VerifyOutcome } from '@talon/manifest-signing';
import { publicKeyFromHex, type NodeIdentity } from './identity.ts';
import type { SigningConfig } from '../config.ts';
import { listTree } from './tree-hash.ts';

const KINDS = new Set<EnvelopeKind>(['agent_manifest', 'skill', 'plugin']);
const HEX64 = /^[0-9a-f]{64}$/;

export const statement = (kind: EnvelopeKind, hash: string) => Buffer.from(`talon-envelope:v1:${kind}:${hash}`);
export const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

export class Signer implements ManifestSigner {
  constructor(
    private readonly id: () => NodeIdentity,
    private readonly config: () => SigningConfig,
  ) {}

  identity() {
    const hex = this.id().publicHex;
    const fingerprint = sha256(Buffer.from(hex, 'hex')).slice(0, 16);
    return { algorithm: 'Ed25519' as const, public_key: hex, fingerprint, signer_id: this.config().signer_id || fingerprint };
  }

  sign(kind: EnvelopeKind, contentHash: string, manifest?: string): SignedEnvelope {
    const signature = edSign(null, statement(kind, contentHash), this.id().privateKey).toString('base64');
    return {
      kind,
      content_hash: contentHash,
      signature,
      signer_public_key: this.id().publicHex,
      signer_id: this.identity().signer_id,
      signed_at: new Date().toISOString(),
      ...(manifest !== undefined && { manifest }),
    };
  }

  verify(input: unknown, expected: { kind: EnvelopeKind; contentHash: string }): VerifyOutcome {
    let envelope: unknown = input;
    if (typeof input === 'string') {
      try {
        envelope = JSON.parse(input);
      } catch {
        return { ok: false, reason: 'the envelope is not valid JSON' };
      }
    }
    const e = envelope as Partial<SignedEnvelope> | null;
    if (!e || typeof e !== 'object') return { ok: false, reason: 'the envelope must be an object' };
    if (!KINDS.has(e.kind as EnvelopeKind)) return { ok: false, reason: `unknown envelope kind '${String(e.kind)}'` };
    if (e.kind !== expected.kind) return { ok: false, reason: `the envelope signs a ${e.kind}, not a ${expected.kind}` };
    if (typeof e.content_hash !== 'string' || !HEX64.test(e.content_hash)) return { ok: false, reason: 'content_hash must be a hex SHA-256' };
    if (typeof e.signer_public_key !== 'string' || !HEX64.test(e.signer_public_key.toLowerCase()))
      return { ok: false, reason: 'signer_public_key must be 64 hex characters' };
    if (typeof e.signature !== 'string') return { ok: false, reason: 'signature missing' };
    if (e.content_hash !== expected.contentHash) return { ok: false, reason: 'content hash mismatch: the content is not what was signed' };
    const signer = e.signer_public_key.toLowerCase();
    let valid = false;
    try {
      valid = edVerify(null, statement(e.kind, e.content_hash), publicKeyFromHex(signer), Buffer.from(e.signature, 'base64'));
    } catch {
      valid = false;
    }
    if (!valid) return { ok: false, reason: 'the signature does not verify' };
    if (!this.trusted(signer)) return { ok: false, reason: `signer ${signer.slice(0, 16)}… is not in [manifest_signing] trusted_signers` };
    return { ok: true, signer };
  }

  hashTree(dir: string): string {
    const hash = createHash('sha256');
    for (const rel of listTree(dir)) {
      if (rel === 'SIGNATURE.json') continue;
      hash.update(`${rel}\0${sha256(readFileSync(path.join(dir, rel)))}\n`);
    }
    return hash.digest('hex');
  }

  private trusted(hex: string): boolean {
    const config = this.config();
    return config.trusted_signers.some((k) => k.toLowerCase() === hex) || (config.trust_self && hex === this.id().publicHex);
  }
}
