import path from 'node:path';
import { defineModule, type FromSchema } from '@talon/module-sdk';
import { inboxHooks } from '@talon/inbox';
import { inboxRoutes } from './routes/inbox.ts';

const configSchema = {
  type: 'object',
  properties: { dir: { type: 'string', default: '', description: 'the drop folder; empty: $TALON_HOME/inbox' } },
  additionalProperties: false,
} as const;
type Config = FromSchema<typeof configSchema, { keepDefaultedPropertiesOptional: false }>;

export default defineModule<Config>({
  configSchema,
  hooks: [inboxHooks],
  register(ctx) {
    return {
      routes: (app) =>
        inboxRoutes(app, {
          dir: () => ctx.config.dir || path.join(ctx.home, 'inbox'),
          sources: () => ctx.hooks.get(inboxHooks).sources.call([]),
        }),
    };
  },
});
