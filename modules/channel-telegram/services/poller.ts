/**
 * The getUpdates loop, driven here rather than by grammY's bot.start(): grammY's polling confirms an update's offset
 * as soon as it has fetched it, and the channels journal must commit first. So each update is handed to ctx.emit and
 * the next offset (update_id + 1) is asked for only after emit resolved; a crash before that makes Telegram deliver
 * the update again, and the journal drops the copy it already has. The offset lives in memory: after a restart the
 * first getUpdates has none and receives exactly the updates never confirmed.
 */
import type { Api } from 'grammy';
import type { UserFromGetMe } from 'grammy/types';
import type { ChannelKit } from '@talon/channels';
import { apiSignal, POLL_SECONDS } from './client.ts';
import { ALLOWED_UPDATES, toInbound, type FileSource } from './inbound.ts';

export type ReconnectLink = Parameters<ConstructorParameters<ChannelKit['Reconnector']>[0]['connect']>[0];

export interface PollDeps {
  api: Api;
  files: FileSource;
  /** The bot's own identity (mention gating); fetched again after a connection failed before it was known. */
  me(): Promise<UserFromGetMe>;
}

export class Poller {
  /** The first update not yet committed to the journal. */
  private offset: number | undefined;

  constructor(private readonly deps: PollDeps) {}

  /** One connection of the reconnect loop: polls until the link is given up (a throw is a failed connection). */
  async connect(link: ReconnectLink): Promise<void> {
    const me = await this.deps.me();
    // The first poll answers at once, so the connection is known good (ready) without waiting out a long poll.
    for (let timeout = 0; !link.signal.aborted; timeout = POLL_SECONDS) {
      const updates = await this.deps.api.getUpdates(
        { ...(this.offset !== undefined ? { offset: this.offset } : {}), timeout, allowed_updates: [...ALLOWED_UPDATES] },
        apiSignal(link.signal),
      );
      link.ready();
      for (const update of updates) {
        const message = await toInbound(update, me, this.deps.files);
        // Resolves after the journal commit (or when it knew the id already); a rejection ends this connection
        // with the offset unmoved, so the update comes again.
        if (message) await this.deps.files.ctx.emit(message);
        this.offset = update.update_id + 1;
        link.traffic();
      }
    }
  }
}
