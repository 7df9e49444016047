/**
 * POST /api/channels/telegram/webhook: public, since the secret Telegram was given in setWebhook is the credential. It
 * is checked before the body is read, so nothing from a caller without it is parsed or journaled. The answer is 200
 * only once the update is committed to the journal; a failed commit is a 500, which Telegram delivers again.
 */
import { HttpError, unauthorized, type Routes } from '@talon/module-sdk';
import type { Update } from 'grammy/types';
import { WEBHOOK_ROUTE } from '../config.ts';
import { SECRET_HEADER, type TelegramEndpoint } from '../services/webhook.ts';

/** What an update must have to be taken; the rest of Telegram's Update is read by the adapter as the Bot API types it. */
const updateBody = {
  type: 'object',
  required: ['update_id'],
  properties: {
    update_id: { type: 'integer', minimum: 0 },
    message: {
      type: 'object',
      required: ['message_id', 'date', 'chat'],
      properties: {
        message_id: { type: 'integer' },
        date: { type: 'integer' },
        chat: { type: 'object', required: ['id', 'type'], properties: { id: { type: 'integer' }, type: { type: 'string' } } },
        from: { type: 'object', required: ['id'], properties: { id: { type: 'integer' } } },
      },
    },
  },
} as const;

export function webhookRoutes(app: Routes, endpoint: TelegramEndpoint): void {
  app.post(
    WEBHOOK_ROUTE,
    {
      config: { public: true },
      schema: { summary: 'An update Telegram delivers to the telegram channel in webhook mode', tags: ['channels'], body: updateBody },
      // Before the body is parsed: a request without the secret costs no parsing and reaches nothing.
      onRequest: async (request) => {
        const receiver = endpoint.current;
        if (!receiver) throw new HttpError(503, 'the telegram channel is not running in webhook mode');
        if (!receiver.accepts(request.headers[SECRET_HEADER])) throw unauthorized(`missing or wrong ${SECRET_HEADER}`);
      },
    },
    async (request) => {
      const receiver = endpoint.current;
      if (!receiver) throw new HttpError(503, 'the telegram channel is not running in webhook mode');
      try {
        // Validated above for what the adapter relies on; the Bot API defines the rest of the shape.
        const { duplicate } = await receiver.take(request.body as unknown as Update);
        return { ok: true, duplicate };
      } catch (err) {
        request.log.warn({ error: err instanceof Error ? err.message : String(err) }, 'telegram update not committed; Telegram will deliver it again');
        throw new HttpError(500, 'the update was not committed; deliver it again');
      }
    },
  );
}
