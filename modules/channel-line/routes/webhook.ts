/**
 * POST /api/channels/line/webhook: public, since the signature with the channel secret is the credential. The body is
 * read raw (the signature covers LINE's exact bytes) and checked before it is parsed, so nothing from a caller without
 * the secret is parsed or journaled. The answer is 200 only once every event of the body is committed; a failure is a
 * 500, which LINE delivers again when webhook redelivery is on (the journal drops a copy it already has).
 */
import { badRequest, HttpError, unauthorized, type Routes } from '@talon/module-sdk';
import { WEBHOOK_ROUTE } from '../config.ts';
import type { LineEvent } from '../services/inbound.ts';
import { SIGNATURE_HEADER } from '../services/signature.ts';
import type { LineEndpoint } from '../services/webhook.ts';

/** LINE's bodies are small (files come by the content API), so a larger one is not LINE's. */
const MAX_BODY_BYTES = 1024 * 1024;

/** The events of a parsed body, or what is wrong with it. */
function eventsOf(raw: string): LineEvent[] | string {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    return 'body: not JSON';
  }
  const events = (body as { events?: unknown } | null)?.events;
  if (!Array.isArray(events)) return 'events: expected an array';
  if (events.some((e) => typeof e !== 'object' || e === null || Array.isArray(e))) return 'events: expected objects';
  return events as LineEvent[];
}

export function webhookRoutes(app: Routes, endpoint: LineEndpoint): void {
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: MAX_BODY_BYTES }, (_request, body, done) => done(null, body));
  app.post(
    WEBHOOK_ROUTE,
    { config: { public: true }, schema: { summary: 'A webhook LINE delivers to the line channel', tags: ['channels'] } },
    async (request) => {
      const receiver = endpoint.current;
      if (!receiver) throw new HttpError(503, 'the line channel is not running');
      const raw = typeof request.body === 'string' ? request.body : '';
      if (!receiver.accepts(request.headers[SIGNATURE_HEADER], raw)) throw unauthorized(`missing or wrong ${SIGNATURE_HEADER}`);
      const events = eventsOf(raw);
      if (typeof events === 'string') throw badRequest(events);
      try {
        // In order: LINE's events of one body are one chat's in sequence.
        for (const event of events) await receiver.take(event);
      } catch (err) {
        request.log.warn(
          { error: err instanceof Error ? err.message : String(err) },
          'LINE webhook not committed; LINE delivers it again when redelivery is on',
        );
        throw new HttpError(500, 'the events were not committed; deliver them again');
      }
      return {};
    },
  );
}
