import type { FromSchema } from '@talon/module-sdk';

/** The [memory] section of config.toml. */
export const memoryConfigSchema = {
  type: 'object',
  properties: {
    embedding_provider: {
      type: 'string',
      default: '',
      description:
        "'' = no embeddings (FTS5 only); 'auto' = the first provider the environment names (OPENAI_API_KEY... then OLLAMA_HOST...); an OpenAI-compatible base URL (http://127.0.0.1:11434/v1), or a provider name the llm module resolves",
    },
    embedding_model: { type: 'string', minLength: 1, default: 'text-embedding-3-small', description: 'model sent to /embeddings' },
    embedding_api_key_env: { type: 'string', default: '', description: 'environment variable holding the embedding API key (overrides the provider key)' },
    auto_memorize: { type: 'boolean', default: true, description: 'store the facts found in each turn (how: extraction)' },
    extraction: {
      type: 'string',
      enum: ['rules', 'llm'],
      default: 'rules',
      description: "'rules' = phrase rules over the user's message, no LLM call; 'llm' = one LLM call per turn (metered, purpose memory_extraction)",
    },
    auto_retrieve: { type: 'boolean', default: true, description: 'append relevant memories to the system prompt before model calls' },
    max_retrieve: {
      type: 'integer',
      minimum: 1,
      maximum: 50,
      default: 5,
      description: 'entries recalled into the prompt; also the default limit of the memory_search tool',
    },
    recall_min_relevance: { type: 'number', minimum: 0, maximum: 1, default: 0.2, description: 'recalled hits below this relevance are left out' },
    extraction_model: { type: 'string', default: '', description: "'provider/model' for extraction = 'llm'; '' = the agent's own model" },
    extractions_per_hour: {
      type: 'integer',
      minimum: 0,
      maximum: 100000,
      'x-error': 'LLM extractions per agent and hour from 0 (none) to 100000',
      default: 30,
      description: "LLM extractions per agent and hour (extraction = 'llm'); 0 = none",
    },
    decay_rate: { type: 'number', minimum: 0, maximum: 10, default: 0.01, description: 'score decay per day: score *= exp(-rate * days / boost)' },
    decay_period_hours: { type: 'number', exclusiveMinimum: 0, default: 24, description: 'decay is applied once per period (idempotent within one)' },
    duplicate_threshold: {
      type: 'number',
      exclusiveMinimum: 0,
      maximum: 1,
      default: 0.85,
      description: 'similarity at which an extracted fact counts as a duplicate; default threshold of the duplicates and consolidate endpoints',
    },
    session_ttl_hours: { type: 'number', exclusiveMinimum: 0, default: 24, description: 'session-level entries idle longer than this expire' },
    stale_score: { type: 'number', minimum: 0, maximum: 1, default: 0.05, description: 'cleanup removes session/agent entries whose score fell below this' },
    max_entries_per_agent: {
      type: 'integer',
      minimum: 0,
      default: 1000,
      description: 'entries kept per agent; past it the least important (lowest score, then least recently recalled) are evicted; 0 = no limit',
    },
    max_key_bytes: { type: 'integer', minimum: 1, maximum: 4096, default: 256, description: 'longest KV key (400 above)' },
    max_value_bytes: { type: 'integer', minimum: 1, default: 262144, description: 'largest KV value as JSON text (413 above)' },
    max_content_bytes: { type: 'integer', minimum: 16, default: 16384, description: 'largest memory entry content (413 above)' },
  },
  additionalProperties: false,
} as const;

export type MemoryConfig = FromSchema<typeof memoryConfigSchema, { keepDefaultedPropertiesOptional: false }>;

/** Defaults, for code that builds services outside the kernel (tests, bench). */
export function defaultMemoryConfig(overrides: Partial<MemoryConfig> = {}): MemoryConfig {
  const props = memoryConfigSchema.properties;
  const base = Object.fromEntries(Object.entries(props).map(([k, v]) => [k, v.default])) as MemoryConfig;
  return { ...base, ...overrides };
}

export const LEVELS = ['user', 'session', 'agent'] as const;
export type Level = (typeof LEVELS)[number];
export const isLevel = (value: string): value is Level => (LEVELS as readonly string[]).includes(value);
