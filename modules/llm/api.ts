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
  static override [Symbol.hasInstance](value: unknown): boolean {
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
  static override [Symbol.hasInstance](value: unknown): boolean {
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

// ---------------------------------------------------------------------------
// Driver toolkit: shared by the driver modules, which may only import this file.

/** True for the rejection of an aborted fetch/SDK call (DOMException or SDK abort error). */
export function isAbortError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  return err.name === 'AbortError' || err.name === 'APIUserAbortError' || (err.cause instanceof Error && err.cause.name === 'AbortError');
}

/** A Retry-After header (seconds or HTTP date) in milliseconds; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** The LlmError for a non-2xx provider response, with the provider's own message when its body has one. */
export async function llmErrorFromResponse(provider: string, response: Response): Promise<LlmError> {
  let detail = response.statusText;
  try {
    const text = await response.text();
    detail = providerMessage(text) ?? (text.slice(0, 300) || detail);
  } catch {
    // the body is only used for the message
  }
  return new LlmError(
    `provider '${provider}' answered ${response.status}: ${detail}`,
    response.status,
    retryAfterMs(response.headers.get('retry-after')),
    provider,
  );
}

function providerMessage(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown };
    if (typeof body.error === 'string') return body.error;
    if (body.error && typeof body.error === 'object' && typeof (body.error as { message?: unknown }).message === 'string')
      return (body.error as { message: string }).message;
    if (typeof body.message === 'string') return body.message;
  } catch {
    // not JSON
  }
  return undefined;
}

/**
 * A fetch that turns non-2xx answers into LlmError (status, Retry-After), for
 * SDKs whose own errors drop the response headers. Abort errors pass through.
 */
export function failingFetch(provider: string, signal?: AbortSignal): typeof fetch {
  return async (input, init) => {
    const signals = [init?.signal, signal].filter((s): s is AbortSignal => Boolean(s));
    const response = await fetch(input, { ...init, signal: signals.length ? AbortSignal.any(signals) : undefined });
    if (!response.ok) throw await llmErrorFromResponse(provider, response);
    return response;
  };
}

/**
 * Normalises whatever an SDK threw into LlmError: LlmError (also as a cause)
 * as is, SDK HTTP errors with their status and Retry-After, anything else as a
 * network error (no status: retryable). Abort errors are returned unchanged.
 */
export function toLlmError(err: unknown, provider: string): Error {
  if (isAbortError(err)) return err as Error;
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof LlmError) return e;
  }
  const message = err instanceof Error ? err.message : String(err);
  const status = typeof (err as { status?: unknown })?.status === 'number' ? (err as { status: number }).status : undefined;
  const headers = (err as { headers?: unknown })?.headers;
  const retryAfter = headers instanceof Headers ? retryAfterMs(headers.get('retry-after')) : undefined;
  if (status !== undefined) return new LlmError(`provider '${provider}' answered ${status}: ${message}`, status, retryAfter, provider);
  const cause = err instanceof Error && err.cause instanceof Error ? ` (${err.cause.message})` : '';
  return new LlmError(`provider '${provider}' could not be reached: ${message}${cause}`, undefined, undefined, provider);
}

/** Parses a tool call's JSON arguments; a non-object or broken JSON becomes {} plus the raw text, never a throw. */
export function parseToolInput(json: string): Record<string, unknown> {
  if (json.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(json);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : { value };
  } catch {
    return { _raw: json };
  }
}

/**
 * Creates a value on first use and keeps it. Drivers build their SDK client
 * this way: the SDK package is loaded when a provider is first called, not at
 * start-up (the three official SDKs together cost ~0.5 s and tens of MB).
 */
export function lazy<T>(make: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => {
    value ??= make().catch((err) => {
      value = undefined;
      throw err;
    });
    return value;
  };
}
