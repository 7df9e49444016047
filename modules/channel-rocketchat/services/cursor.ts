/**
 * The catch-up cursor (migrations/0001_seen.sql): per room, the time of the newest message committed to the
 * journal, written only after the commit; and the account's floor, the server's time at the first connection, from
 * which rooms never seen are read. Posts read again are dropped by the journal (the message _id is the platform id).
 */
import type { Store } from '@talon/module-sdk';

const FLOOR = '';

export interface SeenCursor {
  get(roomId: string): Promise<number | undefined>;
  floor(): Promise<number | undefined>;
  /** Sets the floor when the account has none yet. */
  initFloor(at: number): Promise<void>;
  advance(roomId: string, at: number): Promise<void>;
}

export function seenCursor(store: Store, account: string): SeenCursor {
  const read = async (roomId: string) =>
    (await store.one<{ last_at: number }>('SELECT last_at FROM channel_rocketchat_seen WHERE account = ? AND room_id = ?', [account, roomId]))?.last_at;
  return {
    get: read,
    floor: () => read(FLOOR),
    async initFloor(at) {
      await store.run('INSERT INTO channel_rocketchat_seen (account, room_id, last_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING', [account, FLOOR, at]);
    },
    async advance(roomId, at) {
      await store.run(
        'INSERT INTO channel_rocketchat_seen (account, room_id, last_at) VALUES (?, ?, ?) ON CONFLICT (account, room_id) DO UPDATE SET last_at = excluded.last_at WHERE excluded.last_at > channel_rocketchat_seen.last_at',
        [account, roomId, at],
      );
    },
  };
}
