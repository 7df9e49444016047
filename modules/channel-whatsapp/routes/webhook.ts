/**
 * The callback URL of the WhatsApp app, public: Meta's verification GET is answered with hub.challenge when its
 * hub.verify_token is the configured one; each POST's X-Hub-Signature-256 (the app secret's HMAC of the raw bytes) is
 * checked before the body is parsed or anything stored (401). The POST is answered 200 only once every message of it is
 * committed to the journal; otherwise 500, and Meta delivers the batch again (the journal drops what it has).
 */
import { badRequest, forbidden, HttpError, unauthorized, type Routes } from '@talon/module-sdk';
import { WEBHOOK_ROUTE } from '../config.ts';
import { SIGNATURE_HEADER } from '../services/signature.ts';
import type { WhatsAppEndpoint } from '../services/webhook.ts';

/** Meta's webhook batches are small; the files come by the media endpoints, not in the body. */
const MAX_BODY_BYTES = 1024 * 1024;

const verifyQuery = {
  type: 'object',
  properties: {
    'hub.mode': { type: 'string' },
    'hub.verify_token': { type: 'string' },
    'hub.challenge': { type: 'string', maxLength: 256 },
  },
  required: ['hub.mode', 'hub.verify_token', 'hub.challenge'],
} as const;

export function webhookRoutes(app: Routes, endpoint: WhatsAppEndpoint): void {
  const running = () => {
    const receiver = endpoint.current;
    if (!receiver) throw new HttpError(503, 'the whatsapp channel is not running');
    return receiver;
  };
  // The raw bytes, since the signature covers exactly what Meta sent.
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: MAX_BODY_BYTES }, (_request, body, done) => done(null, body));

  app.get(
    WEBHOOK_ROUTE,
    { config: { public: true }, schema: { summary: "Meta's verification of the WhatsApp callback URL", tags: ['channels'], querystring: verifyQuery } },
    async (request, reply) => {
      const receiver = running();
      const query = request.query;
      if (query['hub.mode'] !== 'subscribe') throw badRequest("hub.mode must be 'subscribe'");
      if (!receiver.verifies(query['hub.verify_token'])) throw forbidden('hub.verify_token is not the configured verify_token');
      return reply.type('text/plain').send(query['hub.challenge']);
    },
  );

  app.post(
    WEBHOOK_ROUTE,
    { config: { public: true }, schema: { summary: 'A signed WhatsApp webhook (messages, statuses)', tags: ['channels'] } },
    async (request) => {
      const receiver = running();
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const problem = receiver.signatureProblem(request.headers[SIGNATURE_HEADER], raw);
      if (problem) throw unauthorized(problem);
      let result;
      try {
        result = await receiver.take(raw.toString('utf8'));
      } catch (err) {
        request.log.warn({ error: err instanceof Error ? err.message : String(err) }, 'whatsapp webhook not committed; Meta will deliver it again');
        throw new HttpError(500, 'the messages were not stored; deliver them again');
      }
      if ('error' in result) throw badRequest(result.error);
      return { ok: true, ...result };
    },
  );
}
