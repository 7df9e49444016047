/**
 * The event queue's position in the module's table, per account: written only after the events it passes are committed
 * to the channels journal, so a crash resumes the same queue from there (the server still holds those events: it drops
 * only those up to the last_event_id a poll names), and an expired queue's successor catches up from last_message_id.
 */
import type { Store } from '@talon/module-sdk';

export interface QueuePosition {
  queueId: string;
  lastEventId: number;
  lastMessageId: number;
}

export interface QueueCursor {
  get(): Promise<QueuePosition | undefined>;
  set(position: QueuePosition): Promise<void>;
}

export function queueCursor(store: Store, account: string): QueueCursor {
  return {
    async get() {
      const row = await store.one<{ queue_id: string; last_event_id: number; last_message_id: number }>(
        'SELECT queue_id, last_event_id, last_message_id FROM channel_zulip_queue WHERE account = ?',
        [account],
      );
      return row ? { queueId: row.queue_id, lastEventId: Number(row.last_event_id), lastMessageId: Number(row.last_message_id) } : undefined;
    },
    async set(p) {
      await store.run(
        'INSERT INTO channel_zulip_queue (account, queue_id, last_event_id, last_message_id, updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (account) DO UPDATE SET queue_id = excluded.queue_id, last_event_id = excluded.last_event_id, last_message_id = excluded.last_message_id, updated_at = excluded.updated_at',
        [account, p.queueId, p.lastEventId, p.lastMessageId, Date.now()],
      );
    },
  };
}
