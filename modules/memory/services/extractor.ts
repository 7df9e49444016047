import type { Logger } from 'pino';
import type { LlmService, ModelRef } from '@talon/llm';
import type { TurnRecord } from '@talon/agents';
import { isLevel, type Level, type MemoryConfig } from '../config.ts';
import type { Memory } from './memory.ts';
import { jaccard, wordSet } from './text.ts';

const HOUR_MS = 3_600_000;
/** Similar enough (same category) to be a newer version of an existing memory rather than a new one. */
const UPDATE_SIMILARITY = 0.5;

export const EXTRACTION_PROMPT = `You extract durable memories from one conversation turn between a user and an AI agent.
Answer with JSON only, in this shape:
{"memories":[{"content":"...","level":"user|agent|session","category":"preference|personal_detail|expertise|work_style|project_context|communication_style|fact"}],
 "relations":[{"subject":"...","relation":"...","object":"...","confidence":0.9}]}
Levels: "user" = facts about the user that stay true across conversations (name, preferences, expertise);
"agent" = knowledge the agent needs for its work (project facts, decisions, conventions);
"session" = context that only matters for the current conversation.
Write each memory as one short, self-contained sentence in the third person. Relations link named entities
(relation in snake_case, e.g. works_at, uses, prefers). Keep only what is worth remembering later;
answer {"memories":[],"relations":[]} when nothing is.`;

export interface Extracted {
  memories: Array<{ content: string; level: Level; category: string | null }>;
  relations: Array<{ subject: string; relation: string; object: string; confidence: number }>;
}

/** Reads the model's answer: the outermost JSON object in the text; anything malformed is dropped. */
export function parseExtraction(text: string): Extracted {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  const out: Extracted = { memories: [], relations: [] };
  if (start < 0 || end <= start) return out;
  let data: unknown;
  try {
    data = JSON.parse(text.slice(start, end + 1));
  } catch {
    return out;
  }
  const obj = (data ?? {}) as { memories?: unknown; relations?: unknown };
  for (const m of Array.isArray(obj.memories) ? obj.memories : []) {
    const { content, level, category } = (m ?? {}) as Record<string, unknown>;
    if (typeof content !== 'string' || !content.trim()) continue;
    out.memories.push({
      content: content.trim(),
      level: typeof level === 'string' && isLevel(level) ? level : 'session',
      category: typeof category === 'string' && category ? category : null,
    });
  }
  for (const r of Array.isArray(obj.relations) ? obj.relations : []) {
    const { subject, relation, object, confidence } = (r ?? {}) as Record<string, unknown>;
    if (typeof subject !== 'string' || typeof relation !== 'string' || typeof object !== 'string' || !subject.trim() || !relation.trim() || !object.trim())
      continue;
    out.relations.push({ subject, relation, object, confidence: typeof confidence === 'number' && confidence >= 0 && confidence <= 1 ? confidence : 0.8 });
  }
  return out;
}

/** 'provider/model' or 'provider:model' → a model ref; a bare name uses the default provider. */
export function parseModelRef(text: string): ModelRef {
  const m = /^([^/:]+)[/:](.+)$/.exec(text.trim());
  return m ? { provider: m[1], model: m[2] } : { provider: 'default', model: text.trim() };
}

/**
 * Auto-memorize: after a turn, one LLM call (purpose 'memory') proposes facts;
 * each is added, merged into a similar memory (its old text kept in the
 * history) or dropped as a duplicate. Calls run one at a time, off the request
 * path, and at most extractions_per_hour per agent.
 */
export class Extractor {
  private readonly windows = new Map<string, number[]>();
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly memory: Memory,
    private readonly llm: () => LlmService | undefined,
    private readonly config: () => MemoryConfig,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Queues the turn; false when auto_memorize is off, no llm module is loaded, or the agent's hourly allowance is used up. */
  enqueue(turn: TurnRecord): boolean {
    const cfg = this.config();
    if (!cfg.auto_memorize || !this.llm() || !turn.exchange.user.trim()) return false;
    const now = this.now();
    const window = (this.windows.get(turn.agent.id) ?? []).filter((t) => t > now - HOUR_MS);
    if (window.length >= cfg.extractions_per_hour) {
      this.log.debug({ agent: turn.agent.id }, 'memory extraction skipped: hourly limit reached');
      this.windows.set(turn.agent.id, window);
      return false;
    }
    window.push(now);
    this.windows.set(turn.agent.id, window);
    this.chain = this.chain
      .then(() => this.extract(turn))
      .catch((err: unknown) => this.log.warn({ err: (err as Error).message, agent: turn.agent.id }, 'memory extraction failed'));
    return true;
  }

  /** Resolves when queued extractions are done (tests). */
  settled(): Promise<void> {
    return this.chain.then(() => undefined);
  }

  async extract(turn: TurnRecord): Promise<{ added: number; updated: number; duplicates: number; relations: number }> {
    const llm = this.llm();
    if (!llm) return { added: 0, updated: 0, duplicates: 0, relations: 0 };
    const cfg = this.config();
    const m = turn.agent.manifest.model;
    const ref: ModelRef = cfg.extraction_model
      ? parseModelRef(cfg.extraction_model)
      : { provider: turn.agent.model.provider, model: turn.agent.model.model, baseUrl: m.base_url, apiKeyEnv: m.api_key_env };
    const result = await llm.complete(ref, {
      system: EXTRACTION_PROMPT,
      messages: [{ role: 'user', content: [{ type: 'text', text: `User: ${turn.exchange.user}\n\nAssistant: ${turn.exchange.assistant}` }] }],
      maxTokens: 1024,
      temperature: 0,
      meta: { agentId: turn.agent.id, sessionId: turn.sessionId, purpose: 'memory' },
    });
    const text = result.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
    const found = parseExtraction(text);
    const counts = { added: 0, updated: 0, duplicates: 0, relations: 0 };
    for (const fact of found.memories) {
      const near = await this.memory.searchHits(fact.content, { agentId: turn.agent.id, level: fact.level, limit: 3 });
      const words = wordSet(fact.content);
      const best = near.hits.map((h) => ({ hit: h, similarity: jaccard(words, wordSet(h.content)) })).sort((a, b) => b.similarity - a.similarity)[0];
      if (best && best.similarity >= cfg.duplicate_threshold) {
        counts.duplicates++;
      } else if (best && best.similarity >= UPDATE_SIMILARITY && fact.category !== null && best.hit.category === fact.category) {
        this.memory.entries.update(best.hit.id, { content: fact.content }, 'extraction update');
        counts.updated++;
      } else {
        this.memory.entries.add({
          content: fact.content,
          agentId: turn.agent.id,
          sessionId: fact.level === 'session' ? turn.sessionId : null,
          level: fact.level,
          category: fact.category,
          source: 'conversation',
          metadata: { turn_id: turn.turnId },
        });
        counts.added++;
      }
    }
    for (const r of found.relations) {
      this.memory.relations.upsert(turn.agent.id, r);
      counts.relations++;
    }
    this.log.debug({ agent: turn.agent.id, ...counts }, 'memories extracted');
    return counts;
  }
}
