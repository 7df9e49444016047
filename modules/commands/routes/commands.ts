import { notFound, type Routes } from '@talon/module-sdk';
import type { CommandRegistry } from '@talon/commands';

const nameParams = { type: 'object', properties: { name: { type: 'string', minLength: 1, maxLength: 200 } }, required: ['name'] } as const;

export function commandRoutes(app: Routes, registry: CommandRegistry): void {
  const tags = ['commands'];
  app.get('/api/commands', { schema: { summary: 'Slash commands: chat commands and skill commands', tags } }, async () => {
    const commands = registry.list();
    return { commands, total: commands.length };
  });
  app.get(
    '/api/commands/:name',
    { schema: { summary: 'One slash command (the slash is optional, case-insensitive)', tags, params: nameParams } },
    async (request) => {
      const wanted = `/${request.params.name.replace(/^\//, '').toLowerCase()}`;
      const found = registry.list().find((c) => c.cmd.toLowerCase() === wanted);
      if (!found) throw notFound(`command '${wanted}' not found`);
      return found;
    },
  );
}
