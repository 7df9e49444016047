/**
 * POST /api/channels/slack/events: Slack's Events API Request URL in HTTP mode. Public: the signature with the
 * signing secret is the credential, checked on the raw bytes before anything is parsed or stored. A `url_verification`
 * request is answered with its challenge; an `event_callback` is answered 200 only after its message is committed to
 * the journal, so an answer Slack never got (or a non-2xx) makes Slack send it again (`X-Slack-Retry-Num`), and the
 * journal drops the repeat by the message's id (channel + ts, the same in every retry).
 */
import { badRequest, HttpError, unauthorized, type Routes } from '@talon/module-sdk';
import type { SlackEndpoint } from '../services/http.ts';
import { parseEventRequest } from '../services/requests.ts';
import { SIGNATURE_HEADER, signatureProblem, TIMESTAMP_HEADER } from '../services/signature.ts';

export const EVENTS_PATH = '/api/channels/slack/events';

export function eventRoutes(app: Routes, endpoint: SlackEndpoint): void {
  // The raw text, since the signature covers the exact bytes Slack sent.
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: 1024 * 1024 }, (_request, body, done) => done(null, body));
  app.post(EVENTS_PATH, { config: { public: true }, schema: { summary: "Slack's Events API requests (HTTP mode)", tags: ['channels'] } }, async (request) => {
    const receiver = endpoint.current;
    if (!receiver) throw new HttpError(503, 'the slack channel is not running in http mode');
    const raw = typeof request.body === 'string' ? request.body : '';
    const problem = signatureProblem(receiver.signingSecret, request.headers[TIMESTAMP_HEADER], request.headers[SIGNATURE_HEADER], raw);
    if (problem) throw unauthorized(problem);
    const parsed = parseEventRequest(raw);
    if ('error' in parsed) throw badRequest(parsed.error);
    if (parsed.type === 'url_verification') return { challenge: parsed.challenge };
    if (parsed.type === 'other') return { ok: true };
    let result;
    try {
      result = await receiver.receive(parsed.event);
    } catch (err) {
      // Not committed: a 503 so that Slack sends it again.
      request.log.warn({ error: err instanceof Error ? err.message : String(err) }, 'slack event not committed; Slack will send it again');
      throw new HttpError(503, 'the event was not stored; send it again');
    }
    return { ok: true, duplicate: result?.duplicate ?? false };
  });
}
