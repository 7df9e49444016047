/**
 * The sync cursor (next_batch) in the module's table, per account: written only after every event of the sync it
 * ends is committed to the channels journal, so a crash makes the homeserver hand the uncommitted events again (the
 * journal drops those it has by event id), and a restart never replays the room history as new messages.
 */
import type { Store } from '@talon/module-sdk';

export interface SyncCursor {
  get(): Promise<string | undefined>;
  set(nextBatch: string): Promise<void>;
}

export function syncCursor(store: Store, account: string): SyncCursor {
  return {
    async get() {
      const row = await store.one<{ next_batch: string }>('SELECT next_batch FROM channel_matrix_sync WHERE account = ?', [account]);
      return row?.next_batch;
    },
    async set(nextBatch) {
      await store.run(
        'INSERT INTO channel_matrix_sync (account, next_batch, updated_at) VALUES (?, ?, ?) ON CONFLICT (account) DO UPDATE SET next_batch = excluded.next_batch, updated_at = excluded.updated_at',
        [account, nextBatch, Date.now()],
      );
    },
  };
}
