import { existsSync, writeFileSync } from 'node:fs';
import { defineModule } from '@talon/module-sdk';
import { secretVault } from '@talon/secrets';
import { createEditor } from './services/editor.ts';
import { SharedChanges } from './services/shared.ts';
import { renderDefaultConfig } from './services/template.ts';
import { configRoutes } from './routes/config.ts';
import { moduleSwitchRoutes } from './routes/modules.ts';

export default defineModule({
  register(ctx) {
    const { file } = ctx.kernel.config;
    const shared: SharedChanges = new SharedChanges({
      store: ctx.store,
      changes: ctx.changes,
      node: ctx.nodes.id,
      file,
      vault: () => ctx.tryUse(secretVault),
      apply: (path, value) => editor.set(path, value, false),
      log: ctx.log,
    });
    const editor = createEditor(ctx.kernel.config, (path, value) => shared.record(path, value));
    return {
      async start() {
        // First start: a commented file with every key of the kernel and of the running modules, from their schemas.
        if (!existsSync(file)) writeFileSync(file, renderDefaultConfig(ctx.kernel.config.schema()), { mode: 0o600 });
        await shared.start();
      },
      routes(app) {
        configRoutes(app, ctx, editor);
        moduleSwitchRoutes(app, ctx, editor);
      },
    };
  },
});
