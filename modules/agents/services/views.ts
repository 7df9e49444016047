/**
 * The JSON views of agents that clients read. The model 'default' stands for
 * the llm module's default model: clients see what it resolves to.
 */
import { createHash } from 'node:crypto';
import type { AgentRecord } from '@talon/agents';

/** A listing as sent: the JSON bytes and their entity tag (If-None-Match → 304 for clients that poll). */
export interface ListBody {
  body: Buffer;
  etag: string;
}

export interface ModelName {
  provider: string;
  model: string;
}

export class AgentViews {
  // Records are replaced, never mutated, on change: a summary's JSON can be kept per record (and default model).
  private readonly summaries = new WeakMap<AgentRecord, { defaults: string; json: string }>();
  /** The last listing, reused while no agent record changed. */
  private lastList?: { agents: readonly AgentRecord[]; defaults: string; list: ListBody };

  /** `defaults` is the default model of the moment ('default' provider and model resolve to it). */
  constructor(private readonly defaults: () => ModelName) {}

  displayModel(agent: AgentRecord): ModelName {
    const defaults = this.defaults();
    return {
      provider: agent.model.provider === 'default' ? defaults.provider : agent.model.provider,
      model: agent.model.model === 'default' ? defaults.model : agent.model.model,
    };
  }

  /**
   * The JSON array of summaries as ready-to-send bytes with their entity tag. Unchanged agents cost no
   * serialisation and no allocation: the registry hands out the same array until a record changes.
   */
  summaryListBody(agents: readonly AgentRecord[]): ListBody {
    const defaults = this.defaultsKey();
    const hit = this.lastList;
    if (hit && hit.defaults === defaults && (hit.agents === agents || (hit.agents.length === agents.length && hit.agents.every((a, i) => a === agents[i]))))
      return hit.list;
    const body = Buffer.from(`[${agents.map((a) => this.summaryJson(a, defaults)).join(',')}]`);
    const list = { body, etag: `"${createHash('sha1').update(body).digest('base64url')}"` };
    this.lastList = { agents, defaults, list };
    return list;
  }

  detail(agent: AgentRecord) {
    const caps = agent.manifest.capabilities;
    return {
      id: agent.id,
      name: agent.name,
      state: agent.state,
      mode: agent.mode,
      created_at: agent.createdAt,
      session_id: agent.sessionId,
      model: this.displayModel(agent),
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

  /** The list item as JSON text, cached: listing 1,000 agents must stay within a few milliseconds. */
  private summaryJson(agent: AgentRecord, defaults: string): string {
    const hit = this.summaries.get(agent);
    if (hit && hit.defaults === defaults) return hit.json;
    const model = this.displayModel(agent);
    const json = JSON.stringify({
      id: agent.id,
      name: agent.name,
      state: agent.state,
      created_at: agent.createdAt,
      model_provider: model.provider,
      model_name: model.model,
    });
    this.summaries.set(agent, { defaults, json });
    return json;
  }

  private defaultsKey(): string {
    const { provider, model } = this.defaults();
    return `${provider}\u0000${model}`;
  }
}
