/**
 * Contract of the llm module (`@talon/llm`): the provider-neutral message format, the driver
 * interface that driver modules implement, the service the agent loop and others call, and the
 * driver kit drivers build on. Types, refs and hooks only: the logic lives in the llm module.
 */
import { AsyncParallelHook, AsyncSeriesBailHook, SyncWaterfallHook, defineHooks, serviceRef, type JsonSchema } from '@talon/module-sdk';

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

/** 'stopped': the caller aborted a stream after content went out (see the 'stopped' StreamEvent). */
export type StopReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence' | 'error' | 'stopped';

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
  | { type: 'done'; result: CompletionResult }
  /**
   * LlmService.stream only, never a driver: the caller aborted after content went out. The stream ends with this
   * instead of the abort error: the content streamed so far, and a usage estimated from the request and that content
   * (4 characters a token; providers report usage only at the end), with which the call is also metered. An abort
   * before any content still rejects with the signal's reason.
   */
  | { type: 'stopped'; result: CompletionResult };

/**
 * A provider wire format by name ('openai', 'anthropic', 'gemini', 'ollama', or any other): a driver
 * module registers it through `llmHooks.drivers`; a provider whose format nobody registered fails at call time.
 */
export type ApiFormat = string;

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

/**
 * A failed provider call. Errors cross module bundles and reloads, so tell one by its name
 * (`err.name === 'LlmError'`) and fields, never with instanceof. Drivers make them with the driver kit.
 */
export interface LlmError extends Error {
  readonly name: 'LlmError';
  /** The provider's HTTP status; absent for network errors and timeouts. */
  readonly status?: number;
  readonly retryAfterMs?: number;
  readonly provider?: string;
  /** 429, 408, 5xx and network errors: worth a retry or the next provider of the fallback chain. */
  readonly retryable: boolean;
}

/** A call refused before reaching the provider (budget, token quota); `status` is the HTTP status to answer with. */
export interface LlmRefusedError extends Error {
  readonly name: 'LlmRefusedError';
  readonly status: number;
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
  /** Where a provider/model pair goes: base URL, key, format. Throws an LlmError with a clear message when it cannot. */
  resolve(ref: ModelRef): ProviderTarget;
  /** One call with retry (429/5xx, Retry-After honoured) and the configured fallback chain. */
  complete(ref: ModelRef, request: Omit<CompletionRequest, 'model'>): Promise<CompletionResult>;
  stream(ref: ModelRef, request: Omit<CompletionRequest, 'model'>): AsyncIterable<StreamEvent>;
  /** The API formats of the loaded driver modules. */
  formats(): ApiFormat[];
  /** [default_model] as configured (what provider 'default' stands for); aliases are not resolved; '' = not set. */
  defaultModel(): { provider: string; model: string; base_url: string; api_key_env: string };
}

export const llmService = serviceRef<LlmService>('llm.service');

export interface LlmErrorInit {
  status?: number;
  retryAfterMs?: number;
  provider?: string;
}

/** What driver modules build on: errors the llm service understands, and the glue SDK clients need. */
export interface DriverKit {
  error(message: string, init?: LlmErrorInit): LlmError;
  isLlmError(err: unknown): err is LlmError;
  /** True for the rejection of an aborted fetch or SDK call. */
  isAbortError(err: unknown): boolean;
  /**
   * Normalises whatever an SDK threw into an LlmError: an LlmError (also as a cause) as is, SDK HTTP
   * errors with their status and Retry-After, anything else as a network error. Abort errors pass unchanged.
   */
  toLlmError(err: unknown, provider: string): Error;
  /** A fetch that turns non-2xx answers into LlmError (status, Retry-After), for SDKs whose errors drop the headers. */
  failingFetch(provider: string, signal?: AbortSignal): typeof fetch;
  /** A tool call's JSON arguments; a non-object or broken JSON becomes {} or the raw text, never a throw. */
  parseToolInput(json: string): Record<string, unknown>;
  /**
   * Creates a value on first use and keeps it (a failure is retried next time). Drivers build their SDK
   * client this way: the SDK package loads when a provider is first called, not at start-up.
   */
  lazy<T>(make: () => Promise<T>): () => Promise<T>;
}

export const llmDriverKit = serviceRef<DriverKit>('llm.drivers');

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
  /**
   * Driver modules register their API format here: (list) => [...list, { format, create }]. A tap is
   * staged and removed with the copy of the module that made it, so a driver's reload swaps it in one step.
   */
  drivers: new SyncWaterfallHook<[DriverFactory[]]>(['drivers']),
  /** Return a refusal to stop the call before the provider is contacted (budgets, quotas). */
  beforeCall: new AsyncSeriesBailHook<[CallCheck], { status: number; error: string } | undefined>(['call']),
  /** Every upstream call, successful or not (usage metering). */
  afterCall: new AsyncParallelHook<[CallRecord]>(['record']),
}));
