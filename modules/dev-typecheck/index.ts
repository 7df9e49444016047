import path from 'node:path';
import { defineModule } from '@talon/module-sdk';
import { BackgroundTypecheck } from './services/typecheck.ts';

/**
 * esbuild drops types, so under `npm run dev` a type error would reload happily. Each time a module
 * copy is swapped in, the TypeScript checker runs in the background on the project that covers it.
 * Outside dev mode this module does nothing.
 */
export default defineModule({
  register(ctx) {
    if (!ctx.kernel.dev) return;
    const checker = new BackgroundTypecheck(ctx.log, path.resolve(ctx.dir, '../..'));
    let booted = false;
    ctx.hooks.kernel.kernel.ready.tap('typecheck', () => void (booted = true));
    ctx.hooks.kernel.module.loaded.tap('typecheck', (module) => {
      if (booted) checker.schedule(module.dir);
    });
    return { stop: () => checker.stop() };
  },
});
