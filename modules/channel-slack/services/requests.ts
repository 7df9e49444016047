/**
 * The body of an Events API request (HTTP mode), checked after its signature: a `url_verification` handshake, an
 * `event_callback` carrying one event, or another type (`app_rate_limited`) that needs only a 200.
 */
import type { SlackMessageEvent } from './events.ts';

export type EventRequest =
  { type: 'url_verification'; challenge: string } | { type: 'event_callback'; event: SlackMessageEvent } | { type: 'other' } | { error: string };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function parseEventRequest(raw: string): EventRequest {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    return { error: 'body: not JSON' };
  }
  if (!isRecord(body) || typeof body.type !== 'string') return { error: 'type: expected a string' };
  if (body.type === 'url_verification') {
    return typeof body.challenge === 'string' && body.challenge
      ? { type: 'url_verification', challenge: body.challenge }
      : { error: 'challenge: expected a string' };
  }
  if (body.type !== 'event_callback') return { type: 'other' };
  if (!isRecord(body.event) || typeof body.event.type !== 'string') return { error: 'event: expected an object with a type' };
  // The event's fields are read one by one (events.ts); anything missing makes it an event the agent does not hear.
  return { type: 'event_callback', event: body.event as SlackMessageEvent };
}
