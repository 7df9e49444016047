/** JSON Schemas shared by the memory routes. */
import { pageQueryProperties } from '@talon/module-sdk';
import { LEVELS } from '../config.ts';

export const agentParams = {
  type: 'object',
  properties: { id: { type: 'string', description: 'agent id (UUID)' } },
  required: ['id'],
} as const;

export const memoryParams = {
  type: 'object',
  properties: { memory_id: { type: 'string', description: 'memory entry id (UUID)' } },
  required: ['memory_id'],
} as const;

export const tagsSchema = { type: 'array', items: { type: 'string', minLength: 1, maxLength: 64 }, maxItems: 64 } as const;
export const levelSchema = {
  type: 'string',
  enum: LEVELS,
  description: 'user: about the person; session: this conversation; agent: the agent’s own knowledge',
} as const;
const isoTime = { type: 'string', format: 'date-time' } as const;

export const listQuery = {
  type: 'object',
  properties: {
    ...pageQueryProperties,
    level: levelSchema,
    category: { type: 'string' },
    tag: { type: 'string' },
    agent_id: { type: 'string' },
    user_id: { type: 'string' },
  },
  additionalProperties: false,
} as const;

const searchProperties = {
  q: { type: 'string', description: 'what to look for (required)' },
  user_id: { type: 'string' },
  session_id: { type: 'string', description: "leaves out other sessions' session-level entries" },
  level: levelSchema,
  limit: { type: 'integer', minimum: 1, description: 'default 10, at most 100' },
} as const;

export const searchQuery = { type: 'object', properties: { ...searchProperties, agent_id: { type: 'string' } }, additionalProperties: false } as const;
export const agentSearchQuery = { type: 'object', properties: searchProperties, additionalProperties: false } as const;

export const createBody = {
  type: 'object',
  properties: {
    content: { type: 'string', minLength: 1 },
    agent_id: { type: 'string', description: 'UUID of the agent the memory belongs to' },
    user_id: { type: 'string', minLength: 1, maxLength: 256 },
    tags: tagsSchema,
    level: levelSchema,
    category: { type: 'string', minLength: 1, maxLength: 64 },
    session_id: { type: 'string', minLength: 1, maxLength: 256 },
    metadata: { type: 'object' },
    expires_at: isoTime,
  },
  required: ['content'],
  additionalProperties: false,
} as const;

export const updateBody = {
  type: 'object',
  properties: {
    content: { type: 'string', minLength: 1 },
    tags: tagsSchema,
    level: levelSchema,
    category: { anyOf: [{ type: 'string', minLength: 1, maxLength: 64 }, { type: 'null' }] },
    metadata: { type: 'object' },
    expires_at: { anyOf: [isoTime, { type: 'null' }] },
  },
  minProperties: 1,
  additionalProperties: false,
} as const;

export const relationBody = {
  type: 'object',
  properties: {
    subject: { type: 'string', minLength: 1, maxLength: 256 },
    relation: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_ -]+$' },
    object: { type: 'string', minLength: 1, maxLength: 256 },
    confidence: { type: 'number', minimum: 0, maximum: 1 },
    source_memory_id: { type: 'string' },
  },
  required: ['subject', 'relation', 'object'],
  additionalProperties: false,
} as const;

export const relationQuery = {
  type: 'object',
  properties: {
    ...pageQueryProperties,
    subject: { type: 'string' },
    relation: { type: 'string' },
    object: { type: 'string' },
    entity: { type: 'string', description: 'subject or object' },
    min_confidence: { type: 'number', minimum: 0, maximum: 1 },
  },
  additionalProperties: false,
} as const;

const importedMemory = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    content: { type: 'string', minLength: 1 },
    level: levelSchema,
    category: { type: ['string', 'null'] },
    agent_id: { type: ['string', 'null'] },
    user_id: { type: ['string', 'null'] },
    session_id: { type: ['string', 'null'] },
    tags: tagsSchema,
    metadata: { type: 'object' },
    source: { type: 'string' },
    score: { type: 'number', minimum: 0, maximum: 1 },
    access_count: { type: 'integer', minimum: 0 },
    created_at: isoTime,
    updated_at: isoTime,
    accessed_at: isoTime,
    expires_at: { anyOf: [isoTime, { type: 'null' }] },
    history: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          content: { type: 'string' },
          tags: tagsSchema,
          level: levelSchema,
          category: { type: ['string', 'null'] },
          changed_at: isoTime,
          reason: { type: 'string' },
        },
        required: ['content'],
      },
    },
  },
  required: ['content'],
} as const;

const importedRelation = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    subject: { type: 'string', minLength: 1 },
    relation: { type: 'string', minLength: 1 },
    object: { type: 'string', minLength: 1 },
    confidence: { type: 'number', minimum: 0, maximum: 1 },
    source_memory_id: { type: ['string', 'null'] },
    created_at: isoTime,
    updated_at: isoTime,
  },
  required: ['subject', 'relation', 'object'],
} as const;

/** The export document (format, agent_id, exported_at are accepted and ignored). */
export const importBody = {
  type: 'object',
  properties: {
    format: { type: 'string', const: 'talon-memory/1' },
    agent_id: { type: 'string' },
    exported_at: { type: 'string' },
    memories: { type: 'array', items: importedMemory, maxItems: 100000 },
    relations: { type: 'array', items: importedRelation, maxItems: 100000 },
    kv_pairs: { type: 'array', items: { type: 'object', properties: { key: { type: 'string' }, value: {} }, required: ['key', 'value'] } },
  },
  additionalProperties: false,
} as const;
