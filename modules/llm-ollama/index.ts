import { defineModule } from '@talon/module-sdk';
import { llmDriverKit, llmHooks, type DriverFactory } from '@talon/llm';
import { ollamaDriver } from './driver.ts';

export default defineModule({
  register(ctx) {
    const kit = ctx.use(llmDriverKit);
    // One factory per copy of the module: the llm service caches the drivers (SDK clients) it creates per factory.
    const factory: DriverFactory = { format: 'ollama', create: (target) => ollamaDriver(target, kit) };
    // Registers the 'ollama' wire format; the tap goes with this copy of the module when it stops or reloads.
    ctx.hooks.tap(llmHooks).drivers.tap('ollama', (list) => [...list, factory]);
  },
});
