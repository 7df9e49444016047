/**
 * The catch-up cursor (migrations/0001_seen.sql): per channel, the create_at of the newest post committed to the
 * journal, written only after the commit; and the account's floor, the server's time at the first connection, from
 * which channels never seen are read. Posts read again are dropped by the journal (the post id is the platform id).
 */
import type { Store } from '@talon/module-sdk';

const FLOOR = '';

export interface SeenCursor {
  get(channelId: string): Promise<number | undefined>;
  floor(): Promise<number | undefined>;
  /** Sets the floor when the account has none yet. */
  initFloor(at: number): Promise<void>;
  advance(channelId: string, at: number): Promise<void>;
}

export function seenCursor(store: Store, account: string): SeenCursor {
  const read = async (channelId: string) =>
    (await store.one<{ last_at: number }>('SELECT last_at FROM channel_mattermost_seen WHERE account = ? AND channel_id = ?', [account, channelId]))?.last_at;
  return {
    get: read,
    floor: () => read(FLOOR),
    async initFloor(at) {
      await store.run('INSERT INTO channel_mattermost_seen (account, channel_id, last_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING', [account, FLOOR, at]);
    },
    async advance(channelId, at) {
      await store.run(
        'INSERT INTO channel_mattermost_seen (account, channel_id, last_at) VALUES (?, ?, ?) ON CONFLICT (account, channel_id) DO UPDATE SET last_at = excluded.last_at WHERE excluded.last_at > channel_mattermost_seen.last_at',
        [account, channelId, at],
      );
    },
  };
}
