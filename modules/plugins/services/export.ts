/** GET /api/plugins/{name}/export: the plugin folder as <name>.tar.gz (installed dependencies left out). */
import { lstatSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type * as TarStream from 'tar-stream';
import { lazyRequire } from '@talon/module-sdk';

/** tar-stream is loaded with the first archive, not at start-up. */
const tarStream = lazyRequire<typeof TarStream>(import.meta.url, 'tar-stream');

const LEFT_OUT = new Set(['.deps', 'node_modules', '__pycache__', '.git']);

export async function exportPlugin(dir: string, name: string): Promise<Buffer> {
  const p = tarStream().pack();
  const walk = (rel: string) => {
    for (const entry of readdirSync(path.join(dir, rel)).sort()) {
      if (LEFT_OUT.has(entry)) continue;
      const r = rel ? `${rel}/${entry}` : entry;
      const st = lstatSync(path.join(dir, r));
      if (st.isDirectory()) walk(r);
      else if (st.isFile()) p.entry({ name: `${name}/${r}`, mode: st.mode & 0o777, mtime: st.mtime }, readFileSync(path.join(dir, r)));
    }
  };
  walk('');
  p.finalize();
  const chunks: Buffer[] = [];
  for await (const c of p) chunks.push(c as Buffer);
  return gzipSync(Buffer.concat(chunks));
}
