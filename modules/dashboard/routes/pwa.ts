/** The installable app's files at the root (services/pwa.ts): public, like the page that links them. */
import type { Routes } from '@talon/module-sdk';
import type { PwaFile } from '../services/pwa.ts';

export function pwaRoutes(app: Routes, files: ReadonlyMap<string, PwaFile>): void {
  for (const [url, file] of files)
    app.get(
      url,
      { config: { public: true, quiet: true }, schema: { summary: 'A file of the installable dashboard (PWA)', tags: ['dashboard'], hide: true } },
      async (_request, reply) => reply.type(file.type).header('cache-control', file.cacheControl).send(file.body),
    );
}
