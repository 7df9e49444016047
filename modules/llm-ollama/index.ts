import { defineModule } from '@talon/module-sdk';
import { llmHooks } from '../llm/api.ts';
import { ollamaDriver } from './driver.ts';

export default defineModule({
  register(ctx) {
    ctx.hooks.tap(llmHooks).drivers.tap('ollama', (list) => [...list, { format: 'ollama', create: ollamaDriver }]);
  },
});
