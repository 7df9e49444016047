import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { Routes } from '@talon/module-sdk';
import type { ApprovalService } from '@talon/approvals';
import type { TaskBoard } from '@talon/tasks';

export interface InboxSources {
  dir: () => string;
  approvals: () => ApprovalService | undefined;
  tasks: () => TaskBoard | undefined;
}

/** Regular files directly in the folder (the drop folder's subfolders, like processed/, are not pending). */
const files = (dir: string): number =>
  existsSync(dir) ? readdirSync(dir, { withFileTypes: true }).filter((d) => d.isFile() && !d.name.startsWith('.')).length : 0;

export function inboxRoutes(app: Routes, s: InboxSources): void {
  app.get('/api/inbox/status', { schema: { summary: 'Pending counts by source', tags: ['system'] }, config: { quiet: true } }, async () => {
    const approvals = s.approvals()?.pendingCount() ?? null;
    // Tasks posted and not yet claimed: work waiting for an agent (or for someone to assign it).
    const tasks = (await s.tasks()?.counts())?.pending ?? null;
    const dir = s.dir();
    const drop = files(dir);
    // A source whose module is not running (or that keeps no queue: deliveries are sent at once) counts as null.
    const sources = { approvals, tasks, deliveries: null, drop_folder: drop };
    const pending_total = Object.values(sources).reduce<number>((n, v) => n + (v ?? 0), 0);
    return { pending_total, sources, drop_folder: { directory: dir, pending_count: drop, processed_count: files(path.join(dir, 'processed')) } };
  });
}
