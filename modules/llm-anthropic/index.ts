import { defineModule } from '@talon/module-sdk';
import { llmHooks } from '../llm/api.ts';
import { anthropicDriver } from './driver.ts';

export default defineModule({
  register(ctx) {
    ctx.hooks.tap(llmHooks).drivers.tap('anthropic', (list) => [...list, { format: 'anthropic', create: anthropicDriver }]);
  },
});
