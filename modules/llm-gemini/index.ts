import { defineModule } from '@talon/module-sdk';
import { llmDriverKit, llmHooks, type DriverFactory } from '@talon/llm';
import { geminiDriver } from './driver.ts';

export default defineModule({
  register(ctx) {
    const kit = ctx.use(llmDriverKit);
    // One factory per copy of the module: the llm service caches the drivers (SDK clients) it creates per factory.
    const factory: DriverFactory = { format: 'gemini', create: (target) => geminiDriver(target, kit) };
    // Registers the 'gemini' wire format; the tap goes with this copy of the module when it stops or reloads.
    ctx.hooks.tap(llmHooks).drivers.tap('gemini', (list) => [...list, factory]);
  },
});
