import { notFound, type Routes } from '@talon/module-sdk';
import type { SkillStore } from '@talon/skills';

/** The chat commands of the WebSocket protocol (spec, WebSocket; served by the agents-ws module). */
const CHAT = [
  { cmd: '/new', desc: 'Start a fresh session; the previous one stays resumable', usage: '/new' },
  { cmd: '/compact', desc: 'Summarise older messages of the session', usage: '/compact' },
  { cmd: '/model', desc: "Switch the agent's model (id or alias)", usage: '/model <name>' },
  { cmd: '/stop', desc: 'Stop the running turn', usage: '/stop' },
  { cmd: '/usage', desc: 'Token usage and cost of the session', usage: '/usage' },
  { cmd: '/think', desc: 'Toggle extended thinking', usage: '/think' },
  { cmd: '/models', desc: 'List the available models', usage: '/models' },
  { cmd: '/providers', desc: 'List the LLM providers and their status', usage: '/providers' },
] as const;

export interface Command {
  cmd: string;
  desc: string;
  usage: string;
  source: 'chat' | 'skill';
}

function all(skills: SkillStore | undefined): Command[] {
  const chat: Command[] = CHAT.map((c) => ({ ...c, source: 'chat' }));
  const taken = new Set(chat.map((c) => c.cmd));
  const fromSkills = (skills?.list() ?? [])
    .map((s): Command => ({ cmd: `/${s.name}`, desc: s.description, usage: `/${s.name} <request>`, source: 'skill' }))
    .filter((c) => !taken.has(c.cmd));
  return [...chat, ...fromSkills];
}

const nameParams = { type: 'object', properties: { name: { type: 'string', minLength: 1, maxLength: 200 } }, required: ['name'] } as const;

export function commandRoutes(app: Routes, skills: () => SkillStore | undefined): void {
  const tags = ['commands'];
  app.get('/api/commands', { schema: { summary: 'Slash commands: chat commands and skill commands', tags } }, async () => {
    const commands = all(skills());
    return { commands, total: commands.length };
  });
  app.get(
    '/api/commands/:name',
    { schema: { summary: 'One slash command (the slash is optional, case-insensitive)', tags, params: nameParams } },
    async (request) => {
      const wanted = `/${request.params.name.replace(/^\//, '').toLowerCase()}`;
      const found = all(skills()).find((c) => c.cmd.toLowerCase() === wanted);
      if (!found) throw notFound(`command '${wanted}' not found`);
      return found;
    },
  );
}
