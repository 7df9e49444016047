/**
 * The errors of a media call. They cross module bundles (drivers build them through the kit) and outlive reloads of
 * this module, so they are recognised by name and fields (MediaError in the contract), never by class identity.
 */
import type { MediaError, MediaErrorKind } from '@talon/media';

class MediaFailure extends Error implements MediaError {
  override readonly name = 'MediaError' as const;
  readonly provider?: string;
  readonly retryAfterMs?: number;
  readonly status?: number;

  constructor(
    readonly kind: MediaErrorKind,
    message: string,
    init: { provider?: string; retryAfterMs?: number; status?: number } = {},
  ) {
    super(message);
    this.provider = init.provider;
    this.retryAfterMs = init.retryAfterMs;
    this.status = init.status;
  }
}

export function mediaError(kind: MediaErrorKind, message: string, init?: { provider?: string; retryAfterMs?: number; status?: number }): MediaError {
  return new MediaFailure(kind, message, init);
}

const KINDS = new Set<string>(['refused', 'not_supported', 'not_configured', 'rate_limited', 'outage']);

export function isMediaError(err: unknown): err is MediaError {
  return err instanceof Error && err.name === 'MediaError' && KINDS.has(String((err as { kind?: unknown }).kind));
}

/** The HTTP status a media error answers with (the contract's table). */
export function mediaErrorStatus(err: MediaError): number {
  switch (err.kind) {
    case 'refused':
    case 'not_supported':
      return 400;
    case 'not_configured':
      return 422;
    case 'rate_limited':
      return 429;
    case 'outage':
      return 502;
  }
}

/** A Retry-After header (seconds or HTTP date) in milliseconds; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** The provider's own explanation in an error body (OpenAI, Google, ElevenLabs, MiniMax shapes), trimmed. */
export function providerMessage(body: Buffer): string | undefined {
  const text = body.subarray(0, 4096).toString('utf8');
  try {
    const json = JSON.parse(text) as Record<string, unknown>;
    const candidates = [json.error, (json.error as Record<string, unknown> | undefined)?.message, json.message, json.detail, json.status_msg];
    candidates.push((json.detail as Record<string, unknown> | undefined)?.message, (json.base_resp as Record<string, unknown> | undefined)?.status_msg);
    const found = candidates.find((c): c is string => typeof c === 'string' && c.trim() !== '');
    if (found) return found.slice(0, 500);
  } catch {
    // not JSON: a short plain text answer is still the provider's reason
  }
  const plain = text.trim();
  return plain && !plain.startsWith('<') ? plain.slice(0, 300) : undefined;
}
