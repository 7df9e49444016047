import type { FromSchema } from '@talon/module-sdk';

export const hubConfigSchema = {
  type: 'object',
  properties: {
    registry_url: {
      type: 'string',
      default: 'https://github.com/librefang/librefang-registry',
      description: 'the registry: a git URL, an absolute folder path, or an HTTP index (a URL ending in .json)',
    },
    mirror_url: { type: 'string', default: '', description: 'the registry behind /api/hub-cn (same forms); empty: the main registry' },
    sync_interval_secs: {
      type: 'integer',
      minimum: 0,
      default: 86400,
      description: 'a read syncs first when the last sync (or failed try) is older; 0: after the first, only POST /api/hub/sync',
    },
    sync_timeout_secs: { type: 'integer', minimum: 1, default: 60, description: 'longest sync (clone, fetch or index download)' },
    allow_hosts: {
      type: 'array',
      items: { type: 'string' },
      default: [],
      description: 'hosts (globs, IPs, CIDRs) downloads and clones may reach despite the private-address rule; the configured registries are always allowed',
    },
    max_archive_bytes: { type: 'integer', minimum: 1024, default: 52428800, description: 'largest archive or index downloaded' },
    page_size: { type: 'integer', minimum: 1, maximum: 200, default: 20, description: 'results per page of search and browse' },
  },
  additionalProperties: false,
} as const;

export type HubConfig = FromSchema<typeof hubConfigSchema, { keepDefaultedPropertiesOptional: false }>;
