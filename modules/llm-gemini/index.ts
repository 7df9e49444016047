import { defineModule } from '@talon/module-sdk';
import { llmHooks } from '../llm/api.ts';
import { geminiDriver } from './driver.ts';

export default defineModule({
  register(ctx) {
    ctx.hooks.tap(llmHooks).drivers.tap('gemini', (list) => [...list, { format: 'gemini', create: geminiDriver }]);
  },
});
