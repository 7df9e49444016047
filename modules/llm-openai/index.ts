import { defineModule } from '@talon/module-sdk';
import { llmHooks } from '../llm/api.ts';
import { openaiDriver } from './driver.ts';

export default defineModule({
  register(ctx) {
    ctx.hooks.tap(llmHooks).drivers.tap('openai', (list) => [...list, { format: 'openai', create: openaiDriver }]);
  },
});
