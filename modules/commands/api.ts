/**
 * Contract of the commands module (`@talon/commands`): the one registry of slash commands. Every chat surface (the
 * WebSocket chat, a channel adapter) hands a message to the registry and gets the command's answer; GET /api/commands
 * lists the same commands. The chat commands of the spec live in the commands module; another module adds its own by
 * tapping `commandHooks.commands` (the tap, and so the command, goes with the module's copy when it stops).
 */
import { SyncWaterfallHook, defineHooks, serviceRef } from '@talon/module-sdk';

/** One call of a command, from whatever chat surface received it. */
export interface CommandCall {
  agentId: string;
  /** The text after the command's name, trimmed ('' without). */
  args: string;
  /**
   * What the surface keeps for this conversation (a socket, a chat of a channel) across commands: a command keeps its
   * own keys in it (`/think` its switch).
   */
  state: Record<string, unknown>;
}

/** The answer: a line for a person, and fields for a client (a `command_result` frame over the WebSocket). */
export type CommandResult = { message: string } & Record<string, unknown>;

export interface SlashCommand {
  /** Without the slash, lowercase: `new`, `model`. */
  name: string;
  description: string;
  /** The arguments as a person writes them, e.g. `<name>` or `[on|off]`; none when it takes none. */
  args?: string;
  /** A thrown error's message is the answer the person sees (an `error` frame). */
  run(call: CommandCall): CommandResult | Promise<CommandResult>;
}

/** A command as GET /api/commands lists it. `source`: answered in the chat, or a skill the agent is asked to use. */
export interface CommandInfo {
  cmd: string;
  desc: string;
  usage: string;
  source: 'chat' | 'skill';
}

export interface CommandRegistry {
  /** The chat commands, then one per installed skill (a name already taken is left out). */
  list(): CommandInfo[];
  /** A message that starts with a slash is a command: its name (lowercase) and arguments; otherwise undefined. */
  parse(text: string): { name: string; args: string } | undefined;
  /** Runs a chat command; rejects naming the commands when there is none of that name. */
  run(name: string, call: CommandCall): Promise<CommandResult>;
}

export const commandRegistry = serviceRef<CommandRegistry>('commands.registry');

export const commandHooks = defineHooks('commands.hooks', () => ({
  /** Collects the commands of other modules: a tap adds its own (`(list) => [...list, command]`). */
  commands: new SyncWaterfallHook<[SlashCommand[]]>(['commands']),
}));
