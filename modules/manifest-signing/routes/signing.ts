/** The node identity's public key, and signing and checking envelopes with it. */
import { badRequest, type Routes } from '@talon/module-sdk';
import type { ManifestSigner } from '@talon/manifest-signing';
import { manifestHash } from '../services/spawn.ts';

const signBody = {
  type: 'object',
  properties: {
    kind: { type: 'string', enum: ['agent_manifest', 'skill'], default: 'agent_manifest' },
    manifest_toml: { type: 'string', maxLength: 1048576, description: 'the agent manifest to sign (kind agent_manifest)' },
    content_hash: { type: 'string', pattern: '^[0-9a-f]{64}$', description: "a skill folder's tree hash (kind skill)" },
  },
  additionalProperties: false,
} as const;

const verifyBody = {
  type: 'object',
  properties: {
    envelope: { type: 'object', description: 'the signed envelope' },
    manifest_toml: { type: 'string', maxLength: 1048576 },
    content_hash: { type: 'string', pattern: '^[0-9a-f]{64}$' },
  },
  required: ['envelope'],
  additionalProperties: false,
} as const;

export function signingRoutes(app: Routes, signer: () => ManifestSigner): void {
  app.get('/api/signing/identity', { schema: { summary: "The node's Ed25519 public key", tags: ['security'] } }, async () => signer().identity());

  app.post(
    '/api/signing/sign',
    { schema: { summary: 'Sign an agent manifest or a skill hash with the node key', tags: ['security'], body: signBody } },
    async (request) => {
      const { kind, manifest_toml, content_hash } = request.body;
      if (kind === 'agent_manifest') {
        if (manifest_toml === undefined) throw badRequest('manifest_toml is required to sign an agent manifest');
        return signer().sign('agent_manifest', manifestHash(manifest_toml), manifest_toml);
      }
      if (!content_hash) throw badRequest("content_hash (the skill folder's tree hash) is required to sign a skill");
      return signer().sign('skill', content_hash);
    },
  );

  app.post(
    '/api/signing/verify',
    { schema: { summary: 'Check an envelope against content and the trusted signers', tags: ['security'], body: verifyBody } },
    async (request) => {
      const { envelope, manifest_toml, content_hash } = request.body;
      const kind = (envelope as { kind?: unknown }).kind === 'skill' ? 'skill' : 'agent_manifest';
      const hash = manifest_toml !== undefined ? manifestHash(manifest_toml) : content_hash;
      if (!hash) throw badRequest('manifest_toml or content_hash is required');
      return signer().verify(envelope, { kind, contentHash: hash });
    },
  );
}
