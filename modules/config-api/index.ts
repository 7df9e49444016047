import { existsSync, writeFileSync } from 'node:fs';
import { defineModule } from '@talon/module-sdk';
import { createEditor } from './services/editor.ts';
import { renderDefaultConfig } from './services/template.ts';
import { configRoutes } from './routes/config.ts';
import { moduleSwitchRoutes } from './routes/modules.ts';

export default defineModule({
  register(ctx) {
    const editor = createEditor(ctx.kernel.config);
    const { file } = ctx.kernel.config;
    return {
      start() {
        // First start: a commented file with every key of the kernel and of the running modules, from their schemas.
        if (!existsSync(file)) writeFileSync(file, renderDefaultConfig(ctx.kernel.config.schema()), { mode: 0o600 });
      },
      routes(app) {
        configRoutes(app, ctx, editor);
        moduleSwitchRoutes(app, ctx, editor);
      },
    };
  },
});
