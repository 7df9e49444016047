/** Request schemas of the plugin endpoints. */
import { RUNTIMES } from '../services/runtimes.ts';

export const nameParams = {
  type: 'object',
  properties: { name: { type: 'string', minLength: 1, maxLength: 128 } },
  required: ['name'],
} as const;

export const installBody = {
  type: 'object',
  properties: {
    source: { type: 'string', enum: ['registry', 'local', 'git'], description: 'where from (guessed from the other fields when absent)' },
    name: { type: 'string', minLength: 1, maxLength: 128, description: 'registry: the plugin name' },
    registry: { type: 'string', enum: ['hub', 'hub-cn'] },
    path: { type: 'string', minLength: 1, maxLength: 4096, description: 'local: an absolute folder' },
    url: { type: 'string', minLength: 1, maxLength: 2048, description: 'git: an http(s) repository URL' },
    subdir: { type: 'string', minLength: 1, maxLength: 512, description: 'git: the plugin folder inside the repository' },
  },
  additionalProperties: false,
} as const;

export const uninstallBody = {
  type: 'object',
  properties: { name: { type: 'string', minLength: 1, maxLength: 128 } },
  required: ['name'],
  additionalProperties: false,
} as const;

export const scaffoldBody = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 128 },
    description: { type: 'string', maxLength: 1024, default: '' },
    runtime: { type: 'string', enum: [...RUNTIMES] },
  },
  required: ['name', 'runtime'],
  additionalProperties: false,
} as const;

export const enableBody = {
  type: 'object',
  properties: { enabled: { type: 'boolean', default: true, description: 'false disables the plugin' } },
  additionalProperties: false,
} as const;

export const prewarmBody = {
  type: 'object',
  properties: {
    plugins: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 128 }, maxItems: 100, description: 'default: every loaded plugin' },
  },
  additionalProperties: false,
} as const;
