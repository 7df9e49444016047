import path from 'node:path';
import { defineModule } from '@talon/module-sdk';
import { mcpIntegrations } from '@talon/mcp';
import { extensionsConfigSchema, type ExtensionsConfig } from './config.ts';
import { Extensions } from './services/extensions.ts';
import { extensionRoutes } from './routes/extensions.ts';

export default defineModule<ExtensionsConfig>({
  configSchema: extensionsConfigSchema,
  register(ctx) {
    const extensions = new Extensions({
      mcp: () => ctx.use(mcpIntegrations),
      templatesDir: path.join(ctx.dataDir, 'templates'),
      installRoots: () => ctx.config.install_roots,
      home: ctx.home,
      log: ctx.log,
    });
    return {
      start: () => extensions.load(),
      routes: (app) => extensionRoutes(app, extensions),
    };
  },
});
