/**
 * POST /api/channels/teams/messages: the bot's messaging endpoint, where the Bot Framework POSTs activities. Public,
 * since the activity's JWT is the credential: it is verified before the body is parsed (401, nothing read or
 * stored), the claims tied to the body once it is (401 serviceurl mismatch; 403 a serviceUrl the bot may not
 * answer). The answer is 200 only after the journal commit; a failed commit is a 500.
 */
import { HttpError, type Routes } from '@talon/module-sdk';
import { MESSAGES_ROUTE } from '../config.ts';
import { activitySchema, type Activity } from '../services/activity.ts';
import type { VerifiedToken } from '../services/jwt.ts';
import type { TeamsEndpoint, TeamsReceiver } from '../services/receiver.ts';

/** The receiver and token a request was verified with, handed from onRequest to the handler. */
const verified = new WeakMap<object, { receiver: TeamsReceiver; token: VerifiedToken }>();

export function messageRoutes(app: Routes, endpoint: TeamsEndpoint): void {
  app.post(
    MESSAGES_ROUTE,
    {
      config: { public: true },
      schema: { summary: 'An activity the Bot Framework delivers to the teams channel', tags: ['channels'], body: activitySchema },
      onRequest: async (request) => {
        const receiver = endpoint.current;
        if (!receiver) throw new HttpError(503, 'the teams channel is not running');
        const check = await receiver.verify(request.headers.authorization).catch((err: unknown) => {
          request.log.warn({ error: err instanceof Error ? err.message : String(err) }, 'teams: signing keys unavailable');
          throw new HttpError(503, 'the Bot Framework signing keys could not be read; deliver it again');
        });
        if (!check.ok) throw new HttpError(401, check.problem);
        verified.set(request, { receiver, token: check.token });
      },
    },
    async (request) => {
      const seen = verified.get(request);
      if (!seen) throw new HttpError(401, 'the request was not verified');
      let taken;
      try {
        // Validated against activitySchema above.
        taken = await seen.receiver.take(request.body as Activity, seen.token);
      } catch (err) {
        request.log.warn({ error: err instanceof Error ? err.message : String(err) }, 'teams activity not committed');
        throw new HttpError(500, 'the activity was not committed; deliver it again');
      }
      if (taken.status === 'refused') throw new HttpError(taken.code, taken.problem);
      return { ok: true, duplicate: taken.duplicate };
    },
  );
}
