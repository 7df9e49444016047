/**
 * Contract of the manifest-signing module (security system manifest_signing): the node's Ed25519 identity and
 * signed envelopes for agent manifests and skills. An envelope signs a domain-separated statement
 * ("talon-envelope:v1:<kind>:<content_hash>"), so a signature made for one use can never pass for another.
 */
import { defineEvents, payload, serviceRef } from '@talon/module-sdk';

export type EnvelopeKind = 'agent_manifest' | 'skill' | 'plugin';

export interface SignedEnvelope {
  kind: EnvelopeKind;
  /** Hex SHA-256 of the content (the manifest TOML as sent; a skill folder's tree hash). */
  content_hash: string;
  /** Base64 Ed25519 signature. */
  signature: string;
  /** Hex of the raw 32-byte Ed25519 public key. */
  signer_public_key: string;
  /** Free label of the signer (a node name). */
  signer_id?: string;
  signed_at: string;
  /** Agent manifests carry their TOML. */
  manifest?: string;
}

export type VerifyOutcome = { ok: true; signer: string } | { ok: false; reason: string };

export interface ManifestSigner {
  /** The node identity's public key (hex) and its short fingerprint. */
  identity(): { algorithm: 'Ed25519'; public_key: string; fingerprint: string; signer_id: string };
  /** Signs content (its hash) with the node identity. */
  sign(kind: EnvelopeKind, contentHash: string, manifest?: string): SignedEnvelope;
  /**
   * Checks an envelope (an object or its JSON text): shape, kind, hash = expected, signature, and a signer in
   * the configured trusted signers (the node's own key counts when trust_self is on).
   */
  verify(envelope: unknown, expected: { kind: EnvelopeKind; contentHash: string }): VerifyOutcome;
  /**
   * The tree hash of a folder: every regular file but SIGNATURE.json (where a signed skill keeps its envelope),
   * by relative path, hashed in path order.
   */
  hashTree(dir: string): string;
}

export const manifestSigner = serviceRef<ManifestSigner>('manifest-signing.signer');

export const manifestEvents = defineEvents('manifest-signing', {
  'manifest.rejected': payload<{ name: string; reason: string }>(),
});
