import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import type { Routes } from '@talon/module-sdk';
import type { InboxSource } from '@talon/inbox';

export interface InboxDeps {
  dir: () => string;
  /** The sources other modules tapped into inboxHooks.sources, read per request. */
  sources: () => InboxSource[];
}

/** Regular files directly in the folder (the drop folder's subfolders, like processed/, are not pending). */
const files = (dir: string): number =>
  existsSync(dir) ? readdirSync(dir, { withFileTypes: true }).filter((d) => d.isFile() && !d.name.startsWith('.')).length : 0;

/** Each source's count by its name, in tap order; a name already taken is left out, a failing count is null. */
async function counts(sources: InboxSource[], drop: number, log: FastifyBaseLogger): Promise<Record<string, number | null>> {
  const unique = sources.filter((s, i) => s.name !== 'drop_folder' && sources.findIndex((o) => o.name === s.name) === i);
  const settled = await Promise.allSettled(unique.map(async (s) => s.pending()));
  const result: Record<string, number | null> = {};
  settled.forEach((outcome, i) => {
    if (outcome.status === 'rejected') log.warn({ err: outcome.reason, source: unique[i].name }, 'inbox source failed to count');
    result[unique[i].name] = outcome.status === 'fulfilled' ? outcome.value : null;
  });
  return { ...result, drop_folder: drop };
}

export function inboxRoutes(app: Routes, deps: InboxDeps): void {
  app.get('/api/inbox/status', { schema: { summary: 'Pending counts by source', tags: ['system'] }, config: { quiet: true } }, async (request) => {
    const dir = deps.dir();
    const drop = files(dir);
    const sources = await counts(deps.sources(), drop, request.log);
    const pending_total = Object.values(sources).reduce<number>((n, v) => n + (v ?? 0), 0);
    return { pending_total, sources, drop_folder: { directory: dir, pending_count: drop, processed_count: files(path.join(dir, 'processed')) } };
  });
}
