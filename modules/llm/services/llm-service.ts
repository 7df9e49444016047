import type { Logger } from 'pino';
import type {
  CallMeta,
  CompletionRequest,
  CompletionResult,
  ContentBlock,
  DriverFactory,
  LlmDriver,
  LlmError,
  LlmService,
  ModelRef,
  ProviderTarget,
  StreamEvent,
  Usage,
  llmHooks,
} from '../api.ts';
import { AttemptSignal, abortError, backoffDelay, raceAbort, sleep } from './backoff.ts';
import type { LlmConfig } from '../config.ts';
import { isAbortError, isLlmError, llmError, refusal, toLlmError } from './errors.ts';

type Hooks = ReturnType<(typeof llmHooks)['create']>;
type Request = Omit<CompletionRequest, 'model'>;

export interface LlmServiceDeps {
  /** [llm] plus the claimed default_model and fallback_providers. */
  config(): LlmConfig;
  resolve(ref: ModelRef): ProviderTarget;
  hooks(): Hooks;
  log: Logger;
}

const ZERO: Usage = { inputTokens: 0, outputTokens: 0 };

/** Rough token count of a request (4 characters a token) for quota checks before the call. */
export function estimateInputTokens(request: Request): number {
  let chars = request.system?.length ?? 0;
  for (const m of request.messages) {
    for (const b of m.content) {
      if (b.type === 'text') chars += b.text.length;
      else if (b.type === 'tool_result') chars += b.content.length;
      else if (b.type === 'tool_use') chars += JSON.stringify(b.input).length + b.name.length;
      else chars += 1000; // an image is priced by the provider per tile; a flat guess suffices here
    }
  }
  for (const t of request.tools ?? []) chars += t.name.length + t.description.length + JSON.stringify(t.inputSchema).length;
  return Math.ceil(chars / 4);
}

/** A stream stopped by its caller: what went out, with a usage estimated from the request and that content. */
function partialResult(said: { text: string; uses: ContentBlock[] }, request: Request, target: ProviderTarget): CompletionResult {
  const content: ContentBlock[] = [...(said.text ? [{ type: 'text' as const, text: said.text }] : []), ...said.uses];
  const outputChars = said.text.length + said.uses.reduce((n, b) => n + JSON.stringify(b).length, 0);
  return {
    content,
    stopReason: 'stopped',
    usage: { inputTokens: estimateInputTokens(request), outputTokens: Math.ceil(outputChars / 4) },
    provider: target.provider,
    model: target.model,
  };
}

/** One provider slot of the chain, ready to call. */
interface Slot {
  target: ProviderTarget;
  driver: LlmDriver;
}

/** A streamed failure after content went out: neither retried nor handed to a fallback (it would duplicate output). */
class EmittedFailure extends Error {
  constructor(readonly error: Error) {
    super(error.message);
  }
}

export function createLlmService(deps: LlmServiceDeps): LlmService {
  const factories = (): DriverFactory[] => deps.hooks().drivers.call([]);
  const meta = (request: Request): CallMeta => request.meta ?? {};

  // Drivers hold SDK clients (connection pools, parsed options): one per driver function and endpoint, not one
  // per call. Keyed by the create function, which a driver module makes once per copy (a reloaded one brings a new one).
  const drivers = new WeakMap<DriverFactory['create'], Map<string, LlmDriver>>();
  const driverFor = (target: ProviderTarget): LlmDriver => {
    const all = factories();
    const factory = all.find((f) => f.format === target.apiFormat);
    if (!factory) {
      const known = [...new Set(all.map((f) => f.format))].join(', ') || 'none';
      throw llmError(
        `no driver for API format '${target.apiFormat}' (provider '${target.provider}'): enable the module that registers it (the built-in ones are named llm-<format>: llm-${target.apiFormat}); formats with a driver: ${known}`,
        { status: 501, provider: target.provider },
      );
    }
    let cache = drivers.get(factory.create);
    if (!cache) drivers.set(factory.create, (cache = new Map()));
    const key = `${target.provider}\u0000${target.baseUrl}\u0000${target.apiKey ?? ''}`;
    let driver = cache.get(key);
    if (!driver) {
      if (cache.size >= 64) cache.clear();
      driver = factory.create(target);
      cache.set(key, driver);
    }
    return driver;
  };

  /** The primary and the fallbacks, each resolved lazily so that a missing key only skips its own slot. */
  function* chain(ref: ModelRef): Generator<ModelRef> {
    yield ref;
    for (const f of deps.config().fallback_providers) yield { provider: f.provider, model: f.model, baseUrl: f.base_url, apiKeyEnv: f.api_key_env };
  }

  async function guard(target: ProviderTarget, request: Request): Promise<void> {
    const refused = await deps
      .hooks()
      .beforeCall.promise({ provider: target.provider, model: target.model, meta: meta(request), estimatedInputTokens: estimateInputTokens(request) });
    if (refused) throw refusal(refused.error, refused.status);
  }

  async function record(target: ProviderTarget, request: Request, started: number, usage: Usage, error?: Error): Promise<void> {
    try {
      await deps.hooks().afterCall.promise({
        provider: target.provider,
        model: target.model,
        usage,
        meta: meta(request),
        latencyMs: Date.now() - started,
        ok: !error,
        ...(error ? { error: error.message } : {}),
      });
    } catch (err) {
      deps.log.warn({ err }, 'afterCall hook failed');
    }
  }

  /** What an attempt's failure means: the caller's abort, a timeout, or a provider error. */
  function failure(err: unknown, attempt: AttemptSignal, target: ProviderTarget, caller?: AbortSignal): Error {
    if (caller?.aborted) return abortError(caller);
    if (attempt.timedOut)
      return llmError(`provider '${target.provider}' did not answer within ${deps.config().request_timeout_secs} s`, { provider: target.provider });
    if (isAbortError(err)) return llmError(`request to provider '${target.provider}' was aborted`, { provider: target.provider });
    return toLlmError(err, target.provider);
  }

  /** Runs attempts of one slot with backoff until success, a non-retryable error or the retry budget is spent. */
  async function withRetry<T>(target: ProviderTarget, request: Request, run: (attempt: AttemptSignal, started: number) => Promise<T>): Promise<T> {
    const cfg = deps.config();
    const maxRetries = target.maxRetries ?? cfg.max_retries;
    for (let retry = 0; ; retry++) {
      const attempt = new AttemptSignal(request.signal, cfg.request_timeout_secs * 1000);
      const started = Date.now();
      let error: Error;
      let finished = false;
      try {
        const value = await run(attempt, started);
        finished = true;
        return value;
      } catch (err) {
        if (err instanceof EmittedFailure) throw err;
        error = failure(err, attempt, target, request.signal);
        await record(target, request, started, ZERO, error);
      } finally {
        attempt.dispose(finished);
      }
      if (!isLlmError(error) || !error.retryable) throw error;
      if (retry >= maxRetries) {
        throw maxRetries === 0
          ? error
          : llmError(`${error.message} (gave up after ${retry + 1} attempts)`, {
              status: error.status,
              retryAfterMs: error.retryAfterMs,
              provider: target.provider,
            });
      }
      const delay = backoffDelay(retry + 1, { baseMs: cfg.retry_base_ms, maxMs: cfg.retry_max_ms, retryAfterMs: error.retryAfterMs });
      deps.log.warn({ provider: target.provider, model: target.model, status: error.status, retry: retry + 1, delayMs: delay }, 'LLM call failed; retrying');
      await sleep(delay, request.signal);
    }
  }

  /** Tries each slot of the chain in order; returns the first success. */
  async function overChain<T>(ref: ModelRef, request: Request, callSlot: (slot: Slot) => Promise<T>): Promise<T> {
    const failures: Array<{ label: string; error: LlmError }> = [];
    const seen = new Set<string>();
    for (const slotRef of chain(ref)) {
      if (request.signal?.aborted) throw abortError(request.signal);
      let target: ProviderTarget;
      let driver: LlmDriver;
      try {
        target = deps.resolve(slotRef);
        driver = driverFor(target);
      } catch (err) {
        failures.push({ label: `${slotRef.provider}/${slotRef.model}`, error: toLlmError(err, slotRef.provider) as LlmError });
        continue;
      }
      const key = `${target.provider}\n${target.model}\n${target.baseUrl}`;
      if (seen.has(key)) continue;
      seen.add(key);
      await guard(target, request);
      try {
        return await callSlot({ target, driver });
      } catch (err) {
        if (err instanceof EmittedFailure) throw err.error;
        if (!isLlmError(err)) throw err; // aborts and programming errors end the call
        failures.push({ label: `${target.provider}/${target.model}`, error: err });
        deps.log.warn({ provider: target.provider, model: target.model, err: err.message }, 'LLM provider failed; trying the next in the fallback chain');
      }
    }
    const last = failures[failures.length - 1]?.error ?? llmError('no LLM provider to call', { status: 500 });
    if (failures.length === 1) throw last;
    const summary = failures.map((f) => `${f.label}: ${f.error.message}`).join('; ');
    throw llmError(`all ${failures.length} providers of the fallback chain failed: ${summary}`, {
      status: last.status,
      retryAfterMs: last.retryAfterMs,
      provider: last.provider,
    });
  }

  const finish = (result: CompletionResult, target: ProviderTarget): CompletionResult => ({
    ...result,
    provider: target.provider,
    model: result.model || target.model,
  });

  return {
    resolve: (ref) => deps.resolve(ref),
    formats: () => [...new Set(factories().map((f) => f.format))],
    defaultModel: () => {
      const { provider, model, base_url, api_key_env } = deps.config().default_model;
      return { provider, model, base_url, api_key_env };
    },

    complete(ref, request) {
      return overChain(ref, request, ({ target, driver }) =>
        withRetry(target, request, async (attempt, started) => {
          const result = finish(await raceAbort(driver.complete({ ...request, model: target.model, signal: attempt.signal }), attempt.signal), target);
          await record(target, request, started, result.usage);
          return result;
        }),
      );
    },

    stream(ref, request) {
      return streamChain(ref, request);
    },
  };

  /**
   * Streams from the first slot that starts answering. Until the first content
   * event, failures are retried / handed to the next slot like complete();
   * after it, a failure ends the stream with that error.
   */
  async function* streamChain(ref: ModelRef, request: Request): AsyncGenerator<StreamEvent> {
    // Events are pumped through a queue so that retry and fallback logic stays in one place (overChain/withRetry).
    const queue: StreamEvent[] = [];
    let wake: (() => void) | undefined;
    let finished = false;
    /** The final event is queued: the producer is ending on its own, there is nothing to stop. */
    let answered = false;
    let failed: { error: unknown } | undefined;
    let consumerGone = false;
    /** What a stream the caller aborted after content went out had said: it ends the stream instead of the abort. */
    let stopped: CompletionResult | undefined;
    let pull: (() => void) | undefined;
    const notify = () => {
      wake?.();
      wake = undefined;
    };
    // The producer stops when the caller aborts or the consumer leaves early (one listener: AbortSignal.any costs far more).
    const stopProducer = new AbortController();
    const producerSignal = stopProducer.signal;
    const onCallerAbort = () => stopProducer.abort(request.signal?.reason);
    if (request.signal?.aborted) onCallerAbort();
    else request.signal?.addEventListener('abort', onCallerAbort, { once: true });

    const producer = overChain(ref, request, ({ target, driver }) =>
      withRetry(target, { ...request, signal: producerSignal }, async (attempt, started) => {
        let emitted = false;
        const said = { text: '', uses: [] as ContentBlock[] };
        const it = driver.stream({ ...request, model: target.model, signal: attempt.signal })[Symbol.asyncIterator]();
        try {
          for (;;) {
            const next = await raceAbort(it.next(), attempt.signal);
            if (next.done) throw llmError(`provider '${target.provider}' ended the stream without a result`, { provider: target.provider });
            attempt.touch();
            const event = next.value;
            if (event.type === 'done') {
              const result = finish(event.result, target);
              await record(target, request, started, result.usage);
              queue.push({ type: 'done', result });
              answered = true;
              notify();
              return;
            }
            emitted = true;
            if (event.type === 'text_delta') said.text += event.text;
            else if (event.type === 'tool_use_end') said.uses.push({ type: 'tool_use', id: event.id, name: event.name, input: event.input });
            queue.push(event);
            notify();
            // Back-pressure: wait until the consumer took the event, so a slow reader does not trip the idle timeout.
            while (queue.length > 0 && !consumerGone) {
              await raceAbort(new Promise<void>((r) => (pull = r)), attempt.signal);
              attempt.touch();
            }
          }
        } catch (err) {
          if (emitted) {
            const error = failure(err, attempt, target, request.signal);
            if (request.signal?.aborted) stopped = partialResult(said, request, target);
            await record(target, request, started, stopped?.usage ?? ZERO, error);
            throw new EmittedFailure(error);
          }
          throw err;
        } finally {
          void Promise.resolve(it.return?.()).catch(() => undefined);
        }
      }),
    ).then(
      () => {
        finished = true;
        notify();
      },
      (error: unknown) => {
        failed = { error: consumerGone && !request.signal?.aborted ? undefined : error };
        finished = true;
        notify();
      },
    );

    try {
      for (;;) {
        const event = queue.shift();
        if (event) {
          pull?.();
          yield event;
          continue;
        }
        if (finished) break;
        await new Promise<void>((r) => (wake = r));
      }
      if (stopped) yield { type: 'stopped', result: stopped };
      else if (failed?.error) throw failed.error;
    } finally {
      consumerGone = true;
      request.signal?.removeEventListener('abort', onCallerAbort);
      if (!finished && !answered) stopProducer.abort(new DOMException('stream consumer stopped', 'AbortError'));
      pull?.();
      await producer;
    }
  }
}
