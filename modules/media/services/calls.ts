/**
 * One provider call, as every media call makes it: the budget check (mediaHooks.beforeCall) before the provider sees
 * it, a time bound per kind, the metering record (mediaHooks.afterCall) whatever the outcome (with the units the
 * provider made once it answered, also when storing or converting them failed afterwards), and the outcome's
 * errors as HTTP errors: a MediaError by its kind (429 with Retry-After), our time bound and a driver's own failure
 * as 502 naming the provider. A caller's abort passes through unchanged.
 */
import { HttpError, tooManyRequests } from '@talon/module-sdk';
import type { Logger } from 'pino';
import type { MediaCallCheck, MediaCallRecord, MediaDriver, MediaKind, MediaUnit } from '@talon/media';
import { isMediaError, mediaErrorStatus } from './kit/errors.ts';

export interface CallHooks {
  beforeCall(check: MediaCallCheck): Promise<{ status: number; error: string } | undefined>;
  afterCall(record: MediaCallRecord): Promise<void>;
}

export interface CallSpec {
  kind: MediaKind;
  unit: MediaUnit;
  driver: MediaDriver;
  model?: string;
  agentId?: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** Retry-After when a provider said none: long enough not to hammer it. */
const DEFAULT_RETRY_SECS = 30;

/** A provider call in two parts, so that what the provider made is metered even when our part afterwards fails. */
export interface CallSteps<M, T> {
  /** The provider's part: the driver's call. */
  call(signal: AbortSignal): Promise<M>;
  /** What the provider made, in units and model: billed once it answered, whatever happens next. */
  measure(made: M): { units: number; model: string };
  /** Our part: convert, store, measure. A failure here is still metered with the units the provider billed. */
  finish(made: M, signal: AbortSignal): Promise<T>;
}

export async function meteredCall<M, T>(hooks: CallHooks, log: Logger, spec: CallSpec, steps: CallSteps<M, T>): Promise<T> {
  const provider = spec.driver.name;
  const refusal = await hooks.beforeCall({ kind: spec.kind, provider, model: spec.model, agentId: spec.agentId });
  if (refusal) throw new HttpError(refusal.status, refusal.error);
  const timeout = AbortSignal.timeout(spec.timeoutMs);
  const signal = spec.signal ? AbortSignal.any([spec.signal, timeout]) : timeout;
  const started = Date.now();
  const record = { kind: spec.kind, provider, unit: spec.unit, agentId: spec.agentId };
  // Before the provider answered nothing was made: the model asked for, else the provider's name (never '').
  let billed = { units: 0, model: spec.model ?? provider };
  try {
    const made = await steps.call(signal);
    billed = steps.measure(made);
    const result = await steps.finish(made, signal);
    await meter(hooks, log, { ...record, ...billed, latencyMs: Date.now() - started, ok: true });
    return result;
  } catch (err) {
    const failure = spec.signal?.aborted ? (err as Error) : toHttpError(err, provider, timeout.aborted ? spec.timeoutMs : undefined, log);
    await meter(hooks, log, { ...record, ...billed, latencyMs: Date.now() - started, ok: false, error: failure.message });
    throw failure;
  }
}

async function meter(hooks: CallHooks, log: Logger, record: MediaCallRecord): Promise<void> {
  // Metering never fails the call the user already has (the taps log their own errors too).
  await hooks.afterCall(record).catch((err: unknown) => log.warn({ err, provider: record.provider }, 'media afterCall failed'));
}

/** `timedOutMs`: set when our own time bound ended the call. */
export function toHttpError(err: unknown, provider: string, timedOutMs: number | undefined, log: Logger): Error {
  if (err instanceof HttpError) return err;
  if (isMediaError(err)) {
    const status = mediaErrorStatus(err);
    if (status !== 429) return new HttpError(status, err.message);
    const secs = err.retryAfterMs !== undefined ? Math.max(1, Math.ceil(err.retryAfterMs / 1000)) : DEFAULT_RETRY_SECS;
    return tooManyRequests(err.message, secs);
  }
  if (timedOutMs !== undefined) return new HttpError(502, `media provider '${provider}' did not finish within ${Math.round(timedOutMs / 1000)} s`);
  if (err instanceof Error && err.name === 'FileRefused')
    return new HttpError(502, `media provider '${provider}' returned a file that was refused: ${err.message}`);
  log.error({ err, provider }, 'media driver failed');
  return new HttpError(502, `media provider '${provider}' failed: ${err instanceof Error ? err.message : String(err)}`);
}
