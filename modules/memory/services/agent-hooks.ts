import type { TapFacade } from '@talon/module-sdk';
import type { agentHooks, ModelCallContext, ToolDefinition } from '@talon/agents';
import type { MemoryConfig } from '../config.ts';
import type { RecallHit } from '../api.ts';
import type { Memory } from './memory.ts';
import type { Extractor } from './extractor.ts';

type AgentHooks = TapFacade<ReturnType<(typeof agentHooks)['create']>>;

export const RECALL_HEADING = '## Relevant memories';
/** One turn calls the model several times with the same user message: search once. */
const RECALL_CACHE_MS = 60_000;

export function formatRecall(hits: RecallHit[]): string {
  return `\n\n${RECALL_HEADING}\nThings you remember from earlier conversations (most relevant first):\n${hits.map((h) => `- ${h.content}`).join('\n')}`;
}

/** The memory_search tool the agent may call. */
export function memorySearchTool(memory: Memory, config: () => MemoryConfig): ToolDefinition {
  return {
    name: 'memory_search',
    description: 'Search your long-term memory (facts remembered from earlier conversations) for entries relevant to a query.',
    inputSchema: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, description: 'what to look for' },
        limit: { type: 'integer', minimum: 1, maximum: 20, description: `how many entries (default ${config().max_retrieve})` },
      },
      required: ['query'],
      additionalProperties: false,
    },
    source: 'memory',
    async execute(input, ctx) {
      const query = typeof input.query === 'string' ? input.query.trim() : '';
      if (!query) return { content: 'query must be a non-empty string', isError: true };
      const limit = typeof input.limit === 'number' && Number.isInteger(input.limit) ? Math.min(Math.max(input.limit, 1), 20) : config().max_retrieve;
      const hits = await memory.search(query, { agentId: ctx.agent.id, sessionId: ctx.sessionId, limit });
      if (!hits.length) return { content: `No memories match '${query}'.` };
      return { content: JSON.stringify(hits.map((h) => ({ id: h.id, content: h.content, level: h.level, category: h.category, relevance: h.relevance }))) };
    },
  };
}

/** Taps the agent loop: recall before model calls, extraction after turns, the memory_search tool. */
export function tapAgentHooks(hooks: AgentHooks, memory: Memory, extractor: Extractor, config: () => MemoryConfig, now: () => number = Date.now): void {
  const recent = new Map<string, { at: number; hits: RecallHit[] }>();

  const recall = async (call: ModelCallContext): Promise<RecallHit[]> => {
    const key = `${call.agent.id}\u0000${call.sessionId}\u0000${call.userMessage}`;
    const cached = recent.get(key);
    if (cached && now() - cached.at < RECALL_CACHE_MS) return cached.hits;
    const cfg = config();
    const hits = (await memory.search(call.userMessage, { agentId: call.agent.id, sessionId: call.sessionId, limit: cfg.max_retrieve })).filter(
      (h) => h.relevance >= cfg.recall_min_relevance,
    );
    for (const [k, v] of recent) if (now() - v.at >= RECALL_CACHE_MS) recent.delete(k);
    recent.set(key, { at: now(), hits });
    return hits;
  };

  hooks.beforeModelCall.tapPromise('recall', async (call) => {
    if (!config().auto_retrieve || !call.userMessage.trim() || call.system.includes(RECALL_HEADING)) return call;
    const hits = await recall(call);
    return hits.length ? { ...call, system: call.system + formatRecall(hits) } : call;
  });

  hooks.afterTurn.tapPromise('memorize', async (turn) => {
    extractor.enqueue(turn);
  });

  const tool = memorySearchTool(memory, config);
  hooks.tools.tap('memory_search', (list) => (list.some((t) => t.name === tool.name) ? list : [...list, tool]));
}
