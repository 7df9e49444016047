/**
 * The spawn check (agentHooks.authorizeSpawn): a signed_manifest must be a valid envelope of exactly the
 * manifest being spawned, by a trusted signer; with require_signed_manifests an API spawn without one is refused.
 * Every refusal is published as manifest.rejected (the audit trail records it).
 */
import type { SpawnRequest } from '@talon/agents';
import type { EventChannel } from '@talon/module-sdk';
import type { manifestEvents } from '@talon/manifest-signing';
import type { ManifestSigner } from '@talon/manifest-signing';
import type { SigningConfig } from '../config.ts';
import { sha256 } from './signer.ts';

/** The content hash of an agent manifest: SHA-256 of its TOML text without surrounding whitespace. */
export const manifestHash = (toml: string) => sha256(toml.trim());

export function checkSpawn(
  request: SpawnRequest,
  signer: ManifestSigner,
  config: SigningConfig,
  events: Pick<EventChannel<typeof manifestEvents>, 'publish'>,
): { status: number; error: string } | undefined {
  const refuse = (status: number, reason: string) => {
    events.publish('manifest.rejected', { name: request.manifest.name, reason });
    return { status, error: `signed_manifest refused: ${reason}` };
  };
  if (request.signedManifest === undefined) {
    if (config.require_signed_manifests && !request.parentId)
      return refuse(403, 'this node requires a signed manifest ([manifest_signing] require_signed_manifests)');
    return undefined;
  }
  let envelope: { manifest?: unknown };
  try {
    envelope = JSON.parse(request.signedManifest) as { manifest?: unknown };
  } catch {
    return refuse(400, 'signed_manifest is not valid JSON');
  }
  if (envelope.manifest !== undefined && (typeof envelope.manifest !== 'string' || envelope.manifest.trim() !== request.manifestToml.trim())) {
    return refuse(403, 'the signed manifest is not the manifest_toml sent');
  }
  const outcome = signer.verify(envelope, { kind: 'agent_manifest', contentHash: manifestHash(request.manifestToml) });
  return outcome.ok ? undefined : refuse(403, outcome.reason);
}
