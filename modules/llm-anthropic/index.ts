import { defineModule } from '@talon/module-sdk';
import { llmDriverKit, llmHooks, type DriverFactory } from '@talon/llm';
import { anthropicDriver } from './driver.ts';

export default defineModule({
  register(ctx) {
    const kit = ctx.use(llmDriverKit);
    // One factory per copy of the module: the llm service caches the drivers (SDK clients) it creates per factory.
    const factory: DriverFactory = { format: 'anthropic', create: (target) => anthropicDriver(target, kit) };
    // Registers the 'anthropic' wire format; the tap goes with this copy of the module when it stops or reloads.
    ctx.hooks.tap(llmHooks).drivers.tap('anthropic', (list) => [...list, factory]);
  },
});
