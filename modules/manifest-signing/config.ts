import type { FromSchema } from '@talon/module-sdk';

export const signingConfigSchema = {
  type: 'object',
  properties: {
    trusted_signers: {
      type: 'array',
      items: { type: 'string', pattern: '^[0-9a-fA-F]{64}$' },
      default: [],
      description: 'hex Ed25519 public keys whose signatures are accepted (signed manifests and skills with verify)',
    },
    trust_self: { type: 'boolean', default: true, description: "accept this node's own signatures" },
    require_signed_manifests: {
      type: 'boolean',
      default: false,
      description: 'refuse (403) a spawn over the API that carries no valid signed_manifest (agents spawned by agents are not affected)',
    },
    signer_id: { type: 'string', default: '', description: 'label put in envelopes this node signs; empty: the key fingerprint' },
  },
  additionalProperties: false,
} as const;

export type SigningConfig = FromSchema<typeof signingConfigSchema, { keepDefaultedPropertiesOptional: false }>;
