import { defineModule } from '@talon/module-sdk';
import { createEditor } from './services/editor.ts';
import { configRoutes } from './routes/config.ts';

export default defineModule({
  register(ctx) {
    const editor = createEditor(ctx.kernel.config);
    return { routes: (app) => configRoutes(app, ctx, editor) };
  },
});
