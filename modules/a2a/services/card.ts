/**
 * Agent cards. The instance card (/.well-known/agent.json and agent-card.json)
 * lists every agent as a skill; each agent also has its own card (GET
 * /a2a/agents, /a2a/agents/{id}/.well-known/agent-card.json) whose URL
 * reaches that agent directly. A card carries the spec's fields (name,
 * description, url, version, capabilities, skills) in the shape A2A 0.3
 * clients read, plus supportedInterfaces, which A2A 1.0 clients (the current
 * @a2a-js/sdk) read: both JSON-RPC versions are served at the same URL.
 */
import type { AgentCard } from '@a2a-js/sdk';
import type { AgentRecord } from '@talon/agents';

export interface CardContext {
  name: string;
  description: string;
  version: string;
  /** Base URL of this instance, without a trailing slash. */
  baseUrl: string;
  /** True when api_key is set: the JSON-RPC endpoint needs the bearer. */
  keyRequired: boolean;
}

export const instanceRpcUrl = (c: CardContext) => `${c.baseUrl}/a2a`;
export const agentRpcUrl = (c: CardContext, agentId: string) => `${c.baseUrl}/a2a/agents/${agentId}`;

const skill = (agent: AgentRecord) => ({
  id: agent.id,
  name: agent.name,
  description: agent.description || `The agent ${agent.name}`,
  tags: agent.tags,
  examples: [] as string[],
  inputModes: ['text/plain'],
  outputModes: ['text/plain'],
  securityRequirements: [],
});

/** The SDK's (A2A 1.0) card: what the request handler validates versions and input modes against. */
export function coreCard(c: CardContext, url: string, name: string, description: string, agents: readonly AgentRecord[]): AgentCard {
  const iface = (protocolVersion: string) => ({ url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion });
  return {
    name,
    description,
    supportedInterfaces: [iface('1.0'), iface('0.3')],
    provider: undefined,
    version: c.version,
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: c.keyRequired
      ? { bearer: { scheme: { $case: 'httpAuthSecurityScheme', value: { scheme: 'Bearer', bearerFormat: '', description: 'the api_key of the instance' } } } }
      : {},
    securityRequirements: c.keyRequired ? [{ schemes: { bearer: { list: [] } } }] : [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: agents.map(skill),
    signatures: [],
  };
}

/** The card as served: 0.3 fields (url, preferredTransport, protocolVersion) and 1.0 fields together. */
export function cardJson(card: AgentCard, keyRequired: boolean, agentId?: string) {
  const url = card.supportedInterfaces[0].url;
  return {
    name: card.name,
    description: card.description,
    url,
    version: card.version,
    ...(agentId ? { agent_id: agentId } : {}),
    protocolVersion: '0.3.0',
    preferredTransport: 'JSONRPC',
    supportedInterfaces: card.supportedInterfaces,
    capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false },
    defaultInputModes: card.defaultInputModes,
    defaultOutputModes: card.defaultOutputModes,
    skills: card.skills.map(({ id, name, description, tags, examples }) => ({ id, name, description, tags, examples })),
    ...(keyRequired
      ? {
          securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'the api_key of the instance' } },
          security: [{ bearer: [] }],
        }
      : {}),
  };
}
