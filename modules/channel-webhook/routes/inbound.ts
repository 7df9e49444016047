/**
 * POST /api/channels/webhook/inbound: public (the HMAC signature with the channel's token is the credential). The body
 * is read raw, since the signature covers the exact bytes; the answer is 200 only once the message is committed to
 * the journal, so a sender that got no 2xx sends again and the journal drops the repeat by its `id`.
 */
import { badRequest, HttpError, unauthorized, type Routes } from '@talon/module-sdk';
import type { WebhookEndpoint } from '../services/adapter.ts';
import { parseInbound } from '../services/inbound.ts';
import { MAX_BODY_BYTES } from '../services/media.ts';
import { SIGNATURE_HEADER, signatureProblem, TIMESTAMP_HEADER } from '../services/signature.ts';

export function inboundRoutes(app: Routes, endpoint: WebhookEndpoint): void {
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: MAX_BODY_BYTES }, (_request, body, done) => done(null, body));
  app.post(
    '/api/channels/webhook/inbound',
    { config: { public: true }, schema: { summary: 'A signed message for the webhook channel', tags: ['channels'] } },
    async (request) => {
      const receiver = endpoint.current;
      if (!receiver) throw new HttpError(503, 'the webhook channel is not running');
      const raw = typeof request.body === 'string' ? request.body : '';
      const problem = signatureProblem(receiver.secret, request.headers[TIMESTAMP_HEADER], request.headers[SIGNATURE_HEADER], raw);
      if (problem) throw unauthorized(problem);
      const parsed = parseInbound(raw);
      if ('error' in parsed) throw badRequest(parsed.error);
      const { duplicate } = await receiver.emit(parsed.message);
      return { ok: true, duplicate };
    },
  );
}
