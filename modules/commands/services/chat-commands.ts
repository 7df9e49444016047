import type { AgentRegistry, AgentRunner, SessionStore } from '@talon/agents';
import type { CatalogService } from '@talon/catalog';
import type { SlashCommand } from '@talon/commands';
import type { UsageService } from '@talon/usage';

export interface ChatCommandDeps {
  registry(): AgentRegistry;
  runner(): AgentRunner;
  sessions(): SessionStore;
  usage(): UsageService | undefined;
  catalog(): CatalogService | undefined;
}

/** The chat commands of the spec (the WebSocket chat's, and every channel's), in the order they are listed. */
export function chatCommands(deps: ChatCommandDeps): SlashCommand[] {
  return [
    {
      name: 'new',
      description: 'Start a fresh session; the previous one stays resumable',
      async run({ agentId }) {
        const sessionId = await deps.sessions().newSession(agentId);
        return { session_id: sessionId, message: 'Started a new session; the previous one stays resumable.' };
      },
    },
    {
      name: 'compact',
      description: 'Summarise older messages of the session',
      run: async ({ agentId }) => ({ ...(await deps.sessions().compact(agentId)) }),
    },
    {
      name: 'model',
      description: "Switch the agent's model (id or alias)",
      args: '<name>',
      async run({ agentId, args }) {
        const agent = args ? await deps.registry().setModel(agentId, args) : deps.registry().get(agentId);
        if (!agent) throw new Error('the agent no longer exists');
        const label = `${agent.model.provider}/${agent.model.model}`;
        return { model: agent.model, message: args ? `Model set to ${label}.` : `Current model: ${label}.` };
      },
    },
    {
      name: 'stop',
      description: 'Stop the running turn',
      run({ agentId }) {
        const stopped = deps.runner().stop(agentId);
        return { stopped, message: stopped ? 'Stopped the running turn.' : 'No turn was running.' };
      },
    },
    {
      name: 'usage',
      description: 'Token usage and cost of the session',
      async run({ agentId }) {
        const usage = deps.usage();
        if (!usage) throw new Error('usage tracking is not available (the usage module is not loaded)');
        const summary = await usage.summary(agentId);
        const { input_tokens, output_tokens, cost_usd, requests } = summary.today;
        return {
          ...summary,
          message: `Today: ${input_tokens} input + ${output_tokens} output tokens, $${cost_usd} in ${requests} calls.`,
        };
      },
    },
    {
      name: 'think',
      description: 'Toggle extended thinking',
      args: '[on|off]',
      run({ args, state }) {
        state.thinking = args ? /^(on|true|1|yes)$/i.test(args) : state.thinking !== true;
        return { enabled: state.thinking, message: `Extended thinking ${state.thinking ? 'on' : 'off'}.` };
      },
    },
    {
      name: 'models',
      description: 'List the available models',
      run() {
        const models = catalogOf(deps)
          .models()
          .map((m) => ({ id: m.id, provider: m.provider, display_name: m.display_name, tier: m.tier }));
        return { models, message: `${models.length} models.` };
      },
    },
    {
      name: 'providers',
      description: 'List the LLM providers and their status',
      run() {
        const providers = catalogOf(deps)
          .providers()
          .map(({ name, display_name, api_format, key_required }) => ({ name, display_name, api_format, key_required }));
        return { providers, message: `${providers.length} providers.` };
      },
    },
  ];
}

function catalogOf(deps: ChatCommandDeps): CatalogService {
  const catalog = deps.catalog();
  if (!catalog) throw new Error('the model catalogue is not available (the catalog module is not loaded)');
  return catalog;
}
