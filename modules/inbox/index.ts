import path from 'node:path';
import { defineModule } from '@talon/module-sdk';
import { inboxHooks } from '@talon/inbox';
import { inboxRoutes } from './routes/inbox.ts';
import { inboxConfigSchema, type InboxConfig } from './config.ts';

export default defineModule<InboxConfig>({
  configSchema: inboxConfigSchema,
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
