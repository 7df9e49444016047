/**
 * What makes the dashboard installable (app/pwa/): the web manifest, the icons, the offline page and the service
 * worker. Static files from the source tree, not the build: their names are fixed (the manifest and the worker's
 * scope need them at the root), so they cannot carry a content hash; they are read once, at start.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';

export interface PwaFile {
  type: string;
  body: Buffer;
  cacheControl: string;
}

/** Not hashed, so revalidated: a day for the icons, every time for the rest (the worker must see its update). */
const FILES: Record<string, { type: string; cacheControl: string }> = {
  'manifest.webmanifest': { type: 'application/manifest+json', cacheControl: 'no-cache' },
  'sw.js': { type: 'text/javascript; charset=utf-8', cacheControl: 'no-cache' },
  'offline.html': { type: 'text/html; charset=utf-8', cacheControl: 'no-cache' },
  'icon.svg': { type: 'image/svg+xml', cacheControl: 'public, max-age=86400' },
  'icon-192.png': { type: 'image/png', cacheControl: 'public, max-age=86400' },
  'icon-512.png': { type: 'image/png', cacheControl: 'public, max-age=86400' },
};

/** The files by URL path (`/sw.js`…). The worker names the version of what it caches, so a changed page installs a new one. */
export function loadPwa(dir: string): Map<string, PwaFile> {
  const files = new Map<string, PwaFile>();
  for (const [name, { type, cacheControl }] of Object.entries(FILES)) files.set(`/${name}`, { type, cacheControl, body: readFileSync(path.join(dir, name)) });
  const cached = ['offline.html', 'icon.svg'].map((name) => files.get(`/${name}`)!.body);
  const version = createHash('sha256').update(Buffer.concat(cached)).digest('hex').slice(0, 12);
  const worker = files.get('/sw.js')!;
  worker.body = Buffer.from(worker.body.toString('utf8').replace('__SHELL_VERSION__', version));
  return files;
}
