import { defineModule } from '@talon/module-sdk';
import { helloConfigSchema, type HelloConfig } from './config.ts';
import { Greetings } from './services/greetings.ts';
import { helloRoutes } from './routes/hello.ts';

export default defineModule<HelloConfig>({
  configSchema: helloConfigSchema,
  register(ctx) {
    // The module's state lives in this closure; the parts returned below reach it typed.
    const greetings = new Greetings(ctx.store);
    let served = 0;
    ctx.hooks.kernel.http.response.tap('count', () => {
      served++;
    });
    ctx.hooks.kernel.config.changed.tapPromise('log', async (change) => {
      if (change.path.startsWith('hello')) ctx.log.info({ key: change.path }, 'hello config changed');
    });
    ctx.onStop(() => ctx.log.debug({ served }, 'hello stopped'));
    return {
      routes: (app) => helloRoutes(app, ctx, greetings),
    };
  },
});
