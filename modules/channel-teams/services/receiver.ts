/**
 * What the messages route sees of the running adapter: `verify` checks the token before the body is read, `take`
 * checks what ties the token to the body, remembers where the conversation is answered and commits the message.
 * Nothing of a request that fails a check reaches the store or the journal.
 */
import type { AdapterContext } from '@talon/channels';
import { toInbound, type Activity } from './activity.ts';
import type { Conversations } from './conversations.ts';
import { bodyProblem, verifyAuthorization, type TokenCheck, type VerifiedToken } from './jwt.ts';
import type { BotFrameworkKeys } from './keys.ts';
import { serviceUrlProblem, type ServiceUrlPolicy } from './service-url.ts';

export type Taken = { status: 'ok'; duplicate: boolean } | { status: 'refused'; code: 401 | 403; problem: string };

export interface TeamsReceiver {
  /** Rejects only with KeysUnavailable. */
  verify(authorization: unknown): Promise<TokenCheck>;
  /** Resolves once committed (or refused); rejects when the commit failed. */
  take(activity: Activity, token: VerifiedToken): Promise<Taken>;
}

/** The module's slot for the running receiver: in the module copy's closure, so a reload swaps route and adapter. */
export interface TeamsEndpoint {
  current?: TeamsReceiver;
}

export function receiver(ctx: AdapterContext, keys: BotFrameworkKeys, store: Conversations, policy: ServiceUrlPolicy): TeamsReceiver {
  const appId = String(ctx.config.app_id);
  return {
    verify: (authorization) => verifyAuthorization(authorization, keys, appId),
    async take(activity, token) {
      const problem = bodyProblem(token, activity);
      if (problem) return { status: 'refused', code: 401, problem };
      // A conversation the bot could not answer is refused before it is stored (SSRF: see service-url.ts).
      const hostProblem = serviceUrlProblem(activity.serviceUrl, policy);
      if (hostProblem) return { status: 'refused', code: 403, problem: hostProblem };
      const message = toInbound(activity, appId);
      if (!message) return { status: 'ok', duplicate: false };
      await store.remember(message.chatId, activity.serviceUrl);
      const { duplicate } = await ctx.emit(message);
      return { status: 'ok', duplicate };
    },
  };
}
