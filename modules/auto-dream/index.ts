import { defineModule, type FromSchema } from '@talon/module-sdk';
import { agentRegistry } from '@talon/agents';
import { semanticMemory } from '@talon/memory';
import { Dreams } from './services/dreams.ts';
import { dreamRoutes } from './routes/auto-dream.ts';

const configSchema = {
  type: 'object',
  properties: {
    enabled: { type: 'boolean', default: false, description: "consolidate agents' memory on a schedule (per-agent switches override)" },
    min_hours: { type: 'number', minimum: 0, default: 24, description: 'an agent is consolidated again after this many hours' },
    check_interval_secs: { type: 'integer', minimum: 1, default: 3600, description: 'how often due agents are looked for' },
  },
  additionalProperties: false,
} as const;
type Config = FromSchema<typeof configSchema, { keepDefaultedPropertiesOptional: false }>;

declare module '@talon/module-sdk' {
  interface TalonEvents {
    'memory.consolidated': { agentId: string; status: string; result: unknown };
  }
}

export default defineModule<Config>({
  configSchema,
  register(ctx) {
    const agents = () => ctx.tryUse(agentRegistry);
    const dreams = new Dreams({
      db: ctx.db,
      agents,
      memory: () => ctx.tryUse(semanticMemory),
      config: () => ctx.config,
      publish: (agentId, status, detail) => ctx.events.publish('memory.consolidated', { agentId, status, result: detail.result }),
    });
    return {
      start() {
        // The scheduler module offers no job service to other modules yet: a timer of our own (docs/decisions-operations.md).
        ctx.setInterval(() => dreams.tick(), ctx.config.check_interval_secs * 1000);
      },
      routes: (app) => dreamRoutes(app, dreams, agents),
    };
  },
});
