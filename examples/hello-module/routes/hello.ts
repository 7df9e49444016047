import type { ModuleContext, Routes } from '@talon/module-sdk';
import type { HelloConfig } from '../config.ts';
import type { Greetings } from '../services/greetings.ts';

const helloSchema = {
  summary: 'Greets someone',
  params: {
    type: 'object',
    properties: { name: { type: 'string', minLength: 1, maxLength: 64 } },
    required: ['name'],
  },
} as const;

export function helloRoutes(app: Routes, ctx: ModuleContext<HelloConfig>, greetings: Greetings): void {
  app.get('/api/hello/:name', { schema: helloSchema }, async (request) => {
    const count = await greetings.record(request.params.name);
    return { message: `${ctx.config.greeting}, ${request.params.name}!`, times: count };
  });
}
