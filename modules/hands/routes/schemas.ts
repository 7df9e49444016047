/** Request schemas of the hands endpoints. */
export const handParams = {
  type: 'object',
  properties: { hand_id: { type: 'string', minLength: 1, maxLength: 128 } },
  required: ['hand_id'],
} as const;

export const instanceParams = {
  type: 'object',
  properties: { id: { type: 'string', minLength: 1, maxLength: 64, description: 'instance UUID' } },
  required: ['id'],
} as const;

export const installBody = {
  type: 'object',
  properties: {
    toml_content: { type: 'string', minLength: 1, maxLength: 2_000_000, description: 'the HAND.toml text' },
    manifest_toml: { type: 'string', minLength: 1, maxLength: 2_000_000, description: 'another name for toml_content' },
    skill_content: { type: 'string', maxLength: 1_000_000, description: 'SKILL.md text shared by every role' },
    skill_files: {
      type: 'object',
      additionalProperties: { type: 'string', maxLength: 1_000_000 },
      maxProperties: 32,
      description: 'SKILL-<role>.md texts by role',
    },
    slug: { type: 'string', minLength: 1, maxLength: 128, description: 'a hand of the hub registry (hands/<slug>/)' },
    registry: { type: 'string', enum: ['hub', 'hub-cn'], description: 'which registry (default hub)' },
    path: { type: 'string', minLength: 1, maxLength: 4096, description: 'an absolute local folder holding HAND.toml' },
  },
  additionalProperties: false,
} as const;

export const activateBody = {
  type: 'object',
  properties: {
    config: {
      type: 'object',
      additionalProperties: { type: ['string', 'number', 'boolean', 'null'] },
      maxProperties: 200,
      description: 'setting values to apply first (as PUT …/settings)',
    },
    force: { type: 'boolean', description: 'activate although mandatory requirements are unmet (the instance is degraded)' },
  },
  additionalProperties: false,
} as const;

export const settingsBody = {
  type: 'object',
  additionalProperties: { type: ['string', 'number', 'boolean', 'null'] },
  maxProperties: 200,
  description: 'setting key → value (null resets to the default); undeclared keys are kept and reported',
} as const;
