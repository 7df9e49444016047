import type { AgentRegistry, AgentRunner, SessionStore } from '@talon/agents';
import type { CatalogService } from '@talon/catalog';
import type { UsageService } from '@talon/usage';
import { COMMANDS, type CommandName } from './protocol.ts';

export interface CommandDeps {
  registry(): AgentRegistry;
  runner(): AgentRunner;
  sessions(): SessionStore;
  usage(): UsageService | undefined;
  catalog(): CatalogService | undefined;
}

/** Per-connection state a command may change. */
export interface CommandState {
  thinking: boolean;
}

/** Fields of the command_result frame (besides type and command). A thrown error becomes an error frame. */
export type CommandResult = { message: string } & Record<string, unknown>;

export class CommandError extends Error {}

const isCommand = (name: string): name is CommandName => (COMMANDS as readonly string[]).includes(name);

export async function runCommand(name: string, args: string, agentId: string, state: CommandState, deps: CommandDeps): Promise<CommandResult> {
  if (!isCommand(name)) throw new CommandError(`unknown command '/${name}'; commands: ${COMMANDS.map((c) => `/${c}`).join(', ')}`);
  switch (name) {
    case 'new': {
      const sessionId = await deps.sessions().newSession(agentId);
      return { session_id: sessionId, message: 'Started a new session; the previous one stays resumable.' };
    }
    case 'compact':
      return { ...(await deps.sessions().compact(agentId)) };
    case 'model': {
      const agent = args ? await deps.registry().setModel(agentId, args) : deps.registry().get(agentId);
      if (!agent) throw new CommandError('the agent no longer exists');
      const label = `${agent.model.provider}/${agent.model.model}`;
      return { model: agent.model, message: args ? `Model set to ${label}.` : `Current model: ${label}.` };
    }
    case 'stop': {
      const stopped = deps.runner().stop(agentId);
      return { stopped, message: stopped ? 'Stopped the running turn.' : 'No turn was running.' };
    }
    case 'usage': {
      const usage = deps.usage();
      if (!usage) throw new CommandError('usage tracking is not available (the usage module is not loaded)');
      const summary = await usage.summary(agentId);
      return {
        ...summary,
        message: `Today: ${summary.today.input_tokens} input + ${summary.today.output_tokens} output tokens, $${summary.today.cost_usd} in ${summary.today.requests} calls.`,
      };
    }
    case 'think':
      state.thinking = args ? /^(on|true|1|yes)$/i.test(args) : !state.thinking;
      return { enabled: state.thinking, message: `Extended thinking ${state.thinking ? 'on' : 'off'}.` };
    case 'models': {
      const models = catalogOf(deps)
        .models()
        .map((m) => ({ id: m.id, provider: m.provider, display_name: m.display_name, tier: m.tier }));
      return { models, message: `${models.length} models.` };
    }
    case 'providers': {
      const providers = catalogOf(deps)
        .providers()
        .map((p) => ({ name: p.name, display_name: p.display_name, api_format: p.api_format, key_required: p.key_required }));
      return { providers, message: `${providers.length} providers.` };
    }
  }
}

function catalogOf(deps: CommandDeps): CatalogService {
  const catalog = deps.catalog();
  if (!catalog) throw new CommandError('the model catalogue is not available (the catalog module is not loaded)');
  return catalog;
}
