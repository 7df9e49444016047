/**
 * POST /api/channels/google_chat/events: public, since the bearer JWT Chat signs each request with is the credential.
 * It is verified before the body is parsed, so nothing from a caller without it is parsed or journaled. The answer is
 * `{}` (no synchronous reply: replies go by the REST API) and comes only once the message is committed; a failed
 * commit is a 500.
 */
import { HttpError, unauthorized, type Routes } from '@talon/module-sdk';
import { EVENTS_ROUTE } from '../config.ts';
import type { ChatEndpoint, ChatEvent } from '../services/events.ts';

/** What an event must have to be read; the rest of Chat's event is read field by field by the adapter. */
const eventBody = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { type: 'string', maxLength: 64 },
    space: { type: 'object' },
    // The lists the adapter walks: anything else in their place is a 400, not a TypeError's 500.
    message: {
      type: 'object',
      properties: { annotations: { type: 'array', items: { type: 'object' } }, attachment: { type: 'array', items: { type: 'object' } } },
    },
  },
} as const;

export function eventRoutes(app: Routes, endpoint: ChatEndpoint): void {
  app.post(
    EVENTS_ROUTE,
    {
      config: { public: true },
      bodyLimit: 1024 * 1024,
      schema: { summary: 'An interaction event Google Chat delivers to the google_chat channel', tags: ['channels'], body: eventBody },
      // Before the body is parsed: a request Chat did not sign costs no parsing and reaches nothing.
      onRequest: async (request) => {
        const receiver = endpoint.current;
        if (!receiver) throw new HttpError(503, 'the google_chat channel is not running');
        const problem = await receiver.verify(request.headers.authorization);
        if (problem) throw unauthorized(problem);
      },
    },
    async (request) => {
      const receiver = endpoint.current;
      if (!receiver) throw new HttpError(503, 'the google_chat channel is not running');
      try {
        // Validated above for what the route relies on; the adapter reads the rest field by field.
        await receiver.take(request.body as ChatEvent);
      } catch (err) {
        request.log.warn({ error: err instanceof Error ? err.message : String(err) }, 'Google Chat event not committed');
        throw new HttpError(500, 'the event was not committed');
      }
      return {};
    },
  );
}
