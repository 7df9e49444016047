import { defineModule } from '@talon/module-sdk';
import { helloConfigSchema, type HelloConfig } from './config.ts';
import { Greetings } from './services/greetings.ts';
import { helloRoutes } from './routes/hello.ts';

let greetings: Greetings | undefined;

export default defineModule<HelloConfig>({
  configSchema: helloConfigSchema,
  register(ctx) {
    greetings = new Greetings(ctx.db);
    // A hook tap: count responses served by the whole service.
    let served = 0;
    ctx.hooks.kernel.http.response.tap('count', () => {
      served++;
    });
    ctx.hooks.kernel.config.changed.tapPromise('log', async (change) => {
      if (change.path.startsWith('hello')) ctx.log.info({ key: change.path }, 'hello config changed');
    });
    ctx.onStop(() => ctx.log.debug({ served }, 'hello stopped'));
  },
  routes(app, ctx) {
    helloRoutes(app, ctx, () => greetings!);
  },
});
