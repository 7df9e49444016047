/**
 * Changes in the skills folder reach the registry without a restart: chokidar reports a path, the skill folder
 * it belongs to is read again after a short quiet period (an editor writes in several steps).
 */
import path from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import type { Logger } from 'pino';
import type { SkillRegistry } from './store.ts';

const QUIET_MS = 250;

export function watchSkills(dir: string, registry: SkillRegistry, log: Logger, timers: { setTimeout: (fn: () => unknown, ms: number) => unknown }): FSWatcher {
  const pending = new Set<string>();
  let scheduled = false;
  const flush = async () => {
    scheduled = false;
    const folders = [...pending];
    pending.clear();
    for (const folder of folders) {
      const outcome = await registry.refreshFolder(folder);
      log.info({ folder, loaded: outcome?.ok ?? false, removed: outcome === undefined }, 'skills folder changed');
    }
  };
  // Dot folders inside the skills folder (editor swap files, .git) are not skills.
  const hidden = (p: string) =>
    path
      .relative(dir, p)
      .split(path.sep)
      .some((part) => part.startsWith('.'));
  const watcher = watch(dir, { ignoreInitial: true, depth: 6, ignored: hidden });
  watcher.on('all', (_event, changed) => {
    const rel = path.relative(dir, changed);
    if (!rel || rel.startsWith('..')) return;
    pending.add(path.join(dir, rel.split(path.sep)[0]));
    if (!scheduled) {
      scheduled = true;
      timers.setTimeout(flush, QUIET_MS);
    }
  });
  watcher.on('error', (err) => log.warn({ err }, 'skills folder watcher failed'));
  return watcher;
}
