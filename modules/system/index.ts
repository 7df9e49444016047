import { defineModule } from '@talon/module-sdk';

export default defineModule({
  routes(app, ctx) {
    app.get('/api/health', { config: { public: true } }, async () => ({ status: 'ok', version: ctx.kernel.version }));
  },
});
