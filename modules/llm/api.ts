/**
 * Contract of the llm module: the provider-neutral message format, the driver
 * interface that driver modules implement, and the service the agent loop and
 * others call. Import types and refs from here; never import llm internals.
 */
import { AsyncParallelHook, AsyncSeriesBailHook, SyncWaterfallHook } from 'tapable';
import { defineHooks, serviceRef, type JsonSchema } from '@talon/module-sdk';

export type ContentBlock =
  | { type: 'text'; text: string }
  | { type: 'image'; mediaType: string; data: string /* base64 */ }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; toolUseId: string; content: string; isError?: boolean };

export interface ChatMessage {
  role: 'user' | 'assistant';
  content: ContentBlock[];
}

export interface ToolSchema {
  name: string;
  description: string;
  inputSchema: JsonSchema;
}

/** Who a call is for, so usage metering and budgets can attribute it. */
export interface CallMeta {
  agentId?: string;
  sessionId?: string;
  purpose?: 'turn' | 'compact' | 'memory' | 'test' | 'chat_completions' | string;
}

export interface CompletionRequest {
  model: string;
  system?: string;
  messages: ChatMessage[];
  tools?: ToolSchema[];
  maxTokens?: number;
  temperature?: number;
  /** Aborting cancels the HTTP request to the provider. */
  signal?: AbortSignal;
  meta?: CallMeta;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

export type StopReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence' | 'error';

export interface CompletionResult {
  /** Text and tool_use blocks, in the order the model produced them. */
  content: ContentBlock[];
  stopReason: StopReason;
  usage: Usage;
  provider: string;
  model: string;
}

export type StreamEvent =
  | { type: 'text_delta'; text: string }
  | { type: 'tool_use_start'; id: string; name: string }
  | { type: 'tool_use_end'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'done'; result: CompletionResult };

export type ApiFormat = 'openai' | 'anthropic' | 'gemini' | 'ollama';

/** Everything a driver needs to reach one provider. */
export interface ProviderTarget {
  provider: string;
  model: string;
  apiFormat: ApiFormat;
  baseUrl: string;
  apiKey?: string;
  /** Retries on 429/5xx before giving up (default 3). */
  maxRetries?: number;
}

/** Thrown by drivers; status and retryAfterMs drive retry and fallback. */
export class LlmError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    readonly retryAfterMs?: number,
    readonly provider?: string,
  ) {
    super(message);
    this.name = 'LlmError';
  }
  /** Every module bundles its own copy of this file, so instanceof goes by name, not by class identity. */
  static [Symbol.hasInstance](value: unknown): boolean {
    return value instanceof Error && value.name === 'LlmError' && 'retryable' in value;
  }
  get retryable(): boolean {
    return this.status === undefined || this.status === 429 || this.status === 408 || this.status >= 500;
  }
}

/** A call refused before reaching the provider (budget, token quota). status is the HTTP status to answer with. */
export class LlmRefusedError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'LlmRefusedError';
  }
  static [Symbol.hasInstance](value: unknown): boolean {
    return value instanceof Error && value.name === 'LlmRefusedError' && typeof (value as { status?: unknown }).status === 'number';
  }
}

export interface LlmDriver {
  complete(request: CompletionRequest): Promise<CompletionResult>;
  stream(request: CompletionRequest): AsyncIterable<StreamEvent>;
}

/** Contributed by a driver module for one API format. */
export interface DriverFactory {
  format: ApiFormat;
  create(target: ProviderTarget): LlmDriver;
}

export interface ModelRef {
  /** 'default' means [default_model]. */
  provider: string;
  /** A model id or an alias. */
  model: string;
  /** Per-agent overrides from the manifest's [model] table. */
  baseUrl?: string;
  apiKeyEnv?: string;
}

export interface LlmService {
  /** Where a provider/model pair goes: base URL, key, format. Throws LlmError with a clear message when it cannot. */
  resolve(ref: ModelRef): ProviderTarget;
  /** One call with retry (429/5xx, Retry-After honoured) and the configured fallback chain. */
  complete(ref: ModelRef, request: Omit<CompletionRequest, 'model'>): Promise<CompletionResult>;
  stream(ref: ModelRef, request: Omit<CompletionRequest, 'model'>): AsyncIterable<StreamEvent>;
  formats(): ApiFormat[];
}

export const llmService = serviceRef<LlmService>('llm.service');

export interface CallRecord {
  provider: string;
  model: string;
  usage: Usage;
  meta: CallMeta;
  latencyMs: number;
  ok: boolean;
  error?: string;
}

export interface CallCheck {
  provider: string;
  model: string;
  meta: CallMeta;
  /** Rough token estimate of the request, for quota checks. */
  estimatedInputTokens: number;
}

export const llmHooks = defineHooks('llm.hooks', () => ({
  /** Driver modules add their factory: (list) => [...list, factory]. */
  drivers: new SyncWaterfallHook<[DriverFactory[]]>(['drivers']),
  /** Return a refusal to stop the call before the provider is contacted (budgets, quotas). */
  beforeCall: new AsyncSeriesBailHook<[CallCheck], { status: number; error: string } | undefined>(['call']),
  /** Every upstream call, successful or not (usage metering). */
  afterCall: new AsyncParallelHook<[CallRecord]>(['record']),
}));
