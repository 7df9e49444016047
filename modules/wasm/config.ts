import type { FromSchema } from '@talon/module-sdk';

export const wasmConfigSchema = {
  type: 'object',
  properties: {
    // The meter is a 64-bit global: a larger budget would wrap around; a trillion instructions outlast any deadline.
    fuel: {
      type: 'integer',
      minimum: 1000,
      maximum: 1_000_000_000_000,
      'x-error': 'an instruction budget from 1000 to 1000000000000',
      default: 100000000,
      description: 'instruction budget of one WASM tool call (fuel meter)',
    },
    timeout_ms: {
      type: 'integer',
      minimum: 10,
      maximum: 600000,
      default: 5000,
      description: 'wall-clock deadline of one WASM tool call; the worker is terminated (epoch meter)',
    },
    memory_mb: { type: 'integer', minimum: 1, maximum: 4096, default: 16, description: 'linear memory cap of a WASM tool call (MiB)' },
    workers: { type: 'integer', minimum: 1, maximum: 16, default: 2, description: 'executor threads kept warm' },
    max_output_bytes: { type: 'integer', minimum: 1024, default: 1048576, description: 'largest result a WASM tool may return' },
  },
  additionalProperties: false,
} as const;

export type WasmConfig = FromSchema<typeof wasmConfigSchema, { keepDefaultedPropertiesOptional: false }>;
