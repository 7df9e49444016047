/**
 * Contract of the inbox module (`@talon/inbox`): GET /api/inbox/status counts what is waiting for someone, by source.
 * The inbox names no source but its own drop folder: a module with a queue of its own (approvals, the task board, a
 * channel's unread messages) taps `inboxHooks.sources`, and its count goes with the module's copy when it stops.
 */
import { SyncWaterfallHook, defineHooks } from '@talon/module-sdk';

export interface InboxSource {
  /** The key in `sources` (snake_case); `drop_folder` is the inbox's own, and a name already taken is left out. */
  name: string;
  /** How many items wait for someone now. A failing count is reported as null. */
  pending(): number | Promise<number>;
}

export const inboxHooks = defineHooks('inbox.hooks', () => ({
  /** Collects the sources: a tap adds its own (`(list) => [...list, source]`). */
  sources: new SyncWaterfallHook<[InboxSource[]]>(['sources']),
}));
