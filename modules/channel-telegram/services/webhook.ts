/**
 * Webhook mode: Telegram POSTs each update to `webhook_url`, which reaches this module's route. One connection of the
 * reconnect loop is a setWebhook (url, secret_token, allowed_updates) held until the loop gives it up; there is no
 * stream to watch, so an idle bot is not a dead one. The route hands each update to the running receiver, which
 * answers only after the journal commit: the route's 200 is Telegram's acknowledgement, and a failed commit is a 5xx
 * that Telegram delivers again (the journal drops a copy it already has).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Api } from 'grammy';
import type { Update, UserFromGetMe } from 'grammy/types';
import { apiSignal } from './client.ts';
import { ALLOWED_UPDATES, toInbound, type FileSource } from './inbound.ts';
import type { ReconnectLink } from './poller.ts';

/** The header Telegram carries the webhook's secret_token in. */
export const SECRET_HEADER = 'x-telegram-bot-api-secret-token';

/** What the route sees of the running adapter (absent unless the channel runs in webhook mode). */
export interface WebhookReceiver {
  /** The header carries the webhook's secret (compared in constant time). */
  accepts(header: unknown): boolean;
  /** Resolves once the update is committed to the journal (or is not a message the agent hears); rejects otherwise. */
  take(update: Update): Promise<{ duplicate: boolean }>;
}

/** The module's slot for the running receiver: in the module copy's closure, so a reload swaps route and adapter together. */
export interface TelegramEndpoint {
  current?: WebhookReceiver;
}

/** A secret_token in Telegram's alphabet ([A-Za-z0-9_-]), for a configuration that gives none. */
export const randomSecret = (): string => randomBytes(32).toString('base64url');

const digest = (value: string) => createHash('sha256').update(value).digest();

export interface WebhookDeps {
  api: Api;
  files: FileSource;
  me(): Promise<UserFromGetMe>;
  url: string;
  secret: string;
  endpoint: TelegramEndpoint;
}

export class Webhook {
  private link: ReconnectLink | undefined;
  readonly receiver: WebhookReceiver;

  constructor(private readonly deps: WebhookDeps) {
    const expected = digest(deps.secret);
    this.receiver = {
      // Digests of equal length, so neither the comparison's time nor a length check tells anything about the secret.
      accepts: (header) => typeof header === 'string' && timingSafeEqual(digest(header), expected),
      take: async (update) => {
        const message = await toInbound(update, await deps.me(), deps.files);
        const result = message ? await deps.files.ctx.emit(message) : { duplicate: false };
        this.link?.traffic();
        return result;
      },
    };
  }

  /** One connection: the webhook set with this start's secret, held until the loop lets go of it. */
  async connect(link: ReconnectLink): Promise<void> {
    await this.deps.me();
    // Taken before setWebhook answers: Telegram may deliver at once, with the new secret.
    this.deps.endpoint.current = this.receiver;
    await this.deps.api.setWebhook(this.deps.url, { secret_token: this.deps.secret, allowed_updates: [...ALLOWED_UPDATES] }, apiSignal(link.signal));
    this.link = link;
    link.ready();
    await new Promise<void>((resolve) => {
      if (link.signal.aborted) resolve();
      else link.signal.addEventListener('abort', () => resolve(), { once: true });
    });
  }

  /** The route stops taking updates for this adapter (a restart's new receiver may already be in place). */
  release(): void {
    if (this.deps.endpoint.current === this.receiver) this.deps.endpoint.current = undefined;
  }
}
