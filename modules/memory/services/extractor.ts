import type { Logger } from 'pino';
import type { LlmService, ModelRef } from '@talon/llm';
import type { TurnRecord } from '@talon/agents';
import { isLevel, type Level, type MemoryConfig } from '../config.ts';
import type { Memory } from './memory.ts';
import { jaccard, wordSet } from './text.ts';
import { extractByRules } from './rules.ts';

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
  /** `single`: a single-valued fact (a name, a home) that replaces the agent's entry of the same category. */
  memories: Array<{ content: string; level: Level; category: string | null; single?: boolean }>;
  relations: Array<{ subject: string; relation: string; object: string; confidence: number }>;
}

type Fact = Extracted['memories'][number];
type Placement = 'added' | 'updated' | 'duplicate';

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

/** The usage purpose of the extraction call: it runs after the turn, on nobody's request, and is metered as such. */
const EXTRACTION_PURPOSE = 'memory_extraction';

/**
 * Auto-memorize: after a turn, facts are found in it — by phrase rules (the
 * default, no LLM call) or, with extraction = "llm", by one metered LLM call —
 * and each is added, merged into the entry it supersedes (the old text kept in
 * the history) or dropped as a duplicate. Extractions run one at a time, off
 * the request path; LLM ones at most extractions_per_hour per agent.
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

  /** Queues the turn; false when auto_memorize is off or, for LLM extraction, no llm module is loaded or the agent's hourly allowance is used up. */
  enqueue(turn: TurnRecord): boolean {
    const cfg = this.config();
    if (!cfg.auto_memorize || !turn.exchange.user.trim()) return false;
    if (cfg.extraction === 'llm' && !this.allowLlmCall(turn.agent.id, cfg)) return false;
    this.chain = this.chain
      .then(() => this.extract(turn))
      .catch((err: unknown) => this.log.warn({ err: (err as Error).message, agent: turn.agent.id }, 'memory extraction failed'));
    return true;
  }

  /** Resolves when queued extractions are done (tests). */
  settled(): Promise<void> {
    return this.chain.then(() => undefined);
  }

  async extract(turn: TurnRecord): Promise<Record<Placement, number> & { relations: number }> {
    const cfg = this.config();
    const llm = cfg.extraction === 'llm';
    const found = llm ? await this.askModel(turn, cfg) : extractByRules(turn.exchange.user);
    const counts = { added: 0, updated: 0, duplicate: 0, relations: 0 };
    for (const fact of found.memories) counts[await this.place(fact, turn, cfg, llm)]++;
    for (const r of found.relations) {
      await this.memory.relations.upsert(turn.agent.id, r);
      counts.relations++;
    }
    this.log.debug({ agent: turn.agent.id, extraction: cfg.extraction, ...counts }, 'memories extracted');
    return counts;
  }

  private allowLlmCall(agentId: string, cfg: MemoryConfig): boolean {
    if (!this.llm()) return false;
    const now = this.now();
    const window = (this.windows.get(agentId) ?? []).filter((t) => t > now - HOUR_MS);
    this.windows.set(agentId, window);
    if (window.length >= cfg.extractions_per_hour) {
      this.log.debug({ agent: agentId }, 'memory extraction skipped: hourly limit reached');
      return false;
    }
    window.push(now);
    return true;
  }

  /** One LLM call on the agent's model (or extraction_model); usage meters it and budgets and quotas may refuse it. */
  private async askModel(turn: TurnRecord, cfg: MemoryConfig): Promise<Extracted> {
    const llm = this.llm();
    if (!llm) return { memories: [], relations: [] };
    const m = turn.agent.manifest.model;
    const ref: ModelRef = cfg.extraction_model
      ? parseModelRef(cfg.extraction_model)
      : { provider: turn.agent.model.provider, model: turn.agent.model.model, baseUrl: m.base_url, apiKeyEnv: m.api_key_env };
    const result = await llm.complete(ref, {
      system: EXTRACTION_PROMPT,
      messages: [{ role: 'user', content: [{ type: 'text', text: `User: ${turn.exchange.user}\n\nAssistant: ${turn.exchange.assistant}` }] }],
      maxTokens: 1024,
      temperature: 0,
      meta: { agentId: turn.agent.id, sessionId: turn.sessionId, purpose: EXTRACTION_PURPOSE },
    });
    return parseExtraction(result.content.map((b) => (b.type === 'text' ? b.text : '')).join(''));
  }

  /** Stores one fact: dropped as a near-duplicate of an entry, written over the entry it supersedes, or added. */
  private async place(fact: Fact, turn: TurnRecord, cfg: MemoryConfig, mergeSimilar: boolean): Promise<Placement> {
    const near = await this.memory.searchHits(fact.content, { agentId: turn.agent.id, level: fact.level, limit: 3 });
    const words = wordSet(fact.content);
    const closest = near.hits.map((h) => ({ hit: h, similarity: jaccard(words, wordSet(h.content)) })).sort((a, b) => b.similarity - a.similarity)[0];
    if (closest && closest.similarity >= cfg.duplicate_threshold) return 'duplicate';
    const superseded = await this.superseded(fact, turn.agent.id, mergeSimilar ? closest : undefined);
    if (superseded) {
      await this.memory.entries.update(superseded, { content: fact.content }, 'extraction update');
      return 'updated';
    }
    await this.memory.entries.add({
      content: fact.content,
      agentId: turn.agent.id,
      sessionId: fact.level === 'session' ? turn.sessionId : null,
      level: fact.level,
      category: fact.category,
      source: 'conversation',
      metadata: { turn_id: turn.turnId },
    });
    return 'added';
  }

  /**
   * The id of the entry a fact is a newer version of: for a single-valued fact, the agent's latest entry of its
   * category; else the closest entry when it is similar enough and of the same category. Rule facts share their
   * templates' words ("The user likes …"), which would make unrelated ones look similar: for them no closest is given.
   */
  private async superseded(
    fact: Fact,
    agentId: string,
    closest?: { hit: { id: string; category: string | null }; similarity: number },
  ): Promise<string | undefined> {
    if (fact.category === null) return undefined;
    if (fact.single) return (await this.memory.entries.list({ agentId, level: fact.level, category: fact.category }, { limit: 1, offset: 0 })).items[0]?.id;
    return closest && closest.similarity >= UPDATE_SIMILARITY && closest.hit.category === fact.category ? closest.hit.id : undefined;
  }
}
