/** Schemas and JSON views shared by the agents routes. */
import { requireUuid, type KernelSettings } from '@talon/module-sdk';
import type { AgentRecord } from '../api.ts';
import type { AgentServices } from '../services/context.ts';

export const idParams = {
  type: 'object',
  properties: { id: { type: 'string' } },
  required: ['id'],
} as const;

export const sessionParams = {
  type: 'object',
  properties: { id: { type: 'string' }, session_id: { type: 'string' } },
  required: ['id', 'session_id'],
} as const;

export const stringList = { type: 'array', items: { type: 'string' } } as const;

/** The agent named by a path id: 400 when it is no UUID, 404 when unknown. */
export function agentParam(s: AgentServices, id: string): AgentRecord {
  return s.registry.require(requireUuid(id, 'agent id'));
}

/** 'default' stands for [default_model]; clients see what it resolves to. */
export function displayModel(agent: AgentRecord, settings: Readonly<KernelSettings>): { provider: string; model: string } {
  const provider = agent.model.provider === 'default' ? settings.default_model.provider : agent.model.provider;
  const model = agent.model.model === 'default' ? settings.default_model.model : agent.model.model;
  return { provider, model };
}

export function summaryView(agent: AgentRecord, settings: Readonly<KernelSettings>) {
  const model = displayModel(agent, settings);
  return { id: agent.id, name: agent.name, state: agent.state, created_at: agent.createdAt, model_provider: model.provider, model_name: model.model };
}

// Records are replaced, never mutated, on change: a summary's JSON can be kept per record (and default model).
const summaries = new WeakMap<AgentRecord, { defaults: string; json: string }>();

/** The last full listing, reused while no agent record changed (records are replaced on change). */
let lastList: { agents: readonly AgentRecord[]; defaults: string; body: Buffer } | undefined;

/** The JSON array of summaries as a ready-to-send buffer; unchanged agents cost no serialisation and no allocation. */
export function summaryListBody(agents: readonly AgentRecord[], settings: Readonly<KernelSettings>): Buffer {
  const defaults = `${settings.default_model.provider}\u0000${settings.default_model.model}`;
  const hit = lastList;
  if (hit && hit.defaults === defaults && hit.agents.length === agents.length && hit.agents.every((a, i) => a === agents[i])) return hit.body;
  const body = Buffer.from(`[${agents.map((a) => summaryJson(a, settings)).join(',')}]`);
  lastList = { agents, defaults, body };
  return body;
}

/** summaryView as JSON text, cached: listing 1,000 agents must stay within a few milliseconds. */
export function summaryJson(agent: AgentRecord, settings: Readonly<KernelSettings>): string {
  const defaults = `${settings.default_model.provider}\u0000${settings.default_model.model}`;
  const hit = summaries.get(agent);
  if (hit && hit.defaults === defaults) return hit.json;
  const json = JSON.stringify(summaryView(agent, settings));
  summaries.set(agent, { defaults, json });
  return json;
}

export function detailView(agent: AgentRecord, settings: Readonly<KernelSettings>) {
  const caps = agent.manifest.capabilities;
  return {
    id: agent.id,
    name: agent.name,
    state: agent.state,
    mode: agent.mode,
    created_at: agent.createdAt,
    session_id: agent.sessionId,
    model: displayModel(agent, settings),
    capabilities: {
      tools: agent.tools,
      network: caps.network,
      memory_read: caps.memory_read,
      memory_write: caps.memory_write,
      shell: caps.shell,
      agent_spawn: caps.agent_spawn ?? false,
      max_llm_tokens_per_hour: agent.maxLlmTokensPerHour,
    },
    description: agent.description,
    tags: agent.tags,
    system_prompt: agent.systemPrompt,
    skills: agent.skills,
    mcp_servers: agent.mcpServers,
    identity: agent.identity,
    config: agent.config,
    parent_id: agent.parentId ?? null,
    version: agent.manifest.version ?? null,
    author: agent.manifest.author ?? null,
    module: agent.manifest.module ?? null,
  };
}
