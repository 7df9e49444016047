import type { CommandCall, CommandInfo, CommandRegistry, CommandResult, SlashCommand } from '@talon/commands';
import type { SkillStore } from '@talon/skills';

export interface RegistryDeps {
  /** The chat commands: the spec's, then those other modules registered through commandHooks.commands. */
  commands(): SlashCommand[];
  skills(): SkillStore | undefined;
}

/**
 * One list, read per call: a module that registers a command, stops or reloads shows at once, and a name already taken
 * is left out (the spec's commands first, then in the order the modules were loaded, then the skills).
 */
export function createCommandRegistry(deps: RegistryDeps): CommandRegistry {
  const chat = (): Map<string, SlashCommand> => {
    const byName = new Map<string, SlashCommand>();
    for (const c of deps.commands()) if (!byName.has(c.name)) byName.set(c.name, c);
    return byName;
  };
  return {
    list() {
      const commands = [...chat().values()].map((c): CommandInfo => ({ cmd: `/${c.name}`, desc: c.description, usage: usage(c), source: 'chat' }));
      const taken = new Set(commands.map((c) => c.cmd));
      const skills = (deps.skills()?.list() ?? [])
        .map((s): CommandInfo => ({ cmd: `/${s.name}`, desc: s.description, usage: `/${s.name} <request>`, source: 'skill' }))
        .filter((c) => !taken.has(c.cmd));
      return [...commands, ...skills];
    },
    parse(text) {
      const m = /^\/(\S+)\s*([\s\S]*)$/.exec(text.trim());
      return m ? { name: m[1].toLowerCase(), args: m[2].trim() } : undefined;
    },
    async run(name: string, call: CommandCall): Promise<CommandResult> {
      const commands = chat();
      const command = commands.get(name);
      if (!command) throw new Error(`unknown command '/${name}'; commands: ${[...commands.keys()].map((c) => `/${c}`).join(', ')}`);
      return command.run(call);
    },
  };
}

const usage = (c: SlashCommand): string => (c.args ? `/${c.name} ${c.args}` : `/${c.name}`);
