/**
 * Writes an archive: manifest.json first (what it holds), then the database snapshot, the config and the
 * folders, then checksums.json with the SHA-256 of every file as it went into the archive. The file is
 * written under a temporary name and renamed when complete, so a listing never shows half an archive. gzip level 1:
 * an online backup should take little CPU from the service (the database compresses well at any level).
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { lstat, readFile, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type * as TarStream from 'tar-stream';
import { lazyRequire } from '@talon/module-sdk';
import {
  CHECKSUMS,
  CONFIG_ENTRY,
  FOLDERS,
  FORMAT,
  FORMAT_VERSION,
  MANIFEST,
  isFolder,
  type Checksums,
  type Component,
  type DatabaseManifest,
  type Manifest,
} from './components.ts';

/** tar-stream is loaded with the first archive, not at start-up. */
const tarStream = lazyRequire<typeof TarStream>(import.meta.url, 'tar-stream');

/** Files up to this size are read whole (small enough to hash in one go without holding the event loop) (their size cannot change between the header and the bytes). */
const WHOLE = 1024 * 1024;

export interface ArchiveInput {
  file: string;
  /** Where the archive is written before it is renamed to `file` (see leftovers.ts). */
  partial: string;
  home: string;
  version: string;
  components: Component[];
  /** The consistent database snapshot (made before), when the database is included: its files and what they are. */
  database?: DatabaseSnapshot;
  /** config.toml text without secrets, when the config is included. */
  configText?: string;
  warn: (message: string) => void;
}

export interface DatabaseSnapshot {
  /** Entry name in the archive → the file holding it. */
  files: Array<{ name: string; source: string }>;
  manifest: DatabaseManifest;
}

class Packer {
  readonly pack = tarStream().pack();
  readonly sums: Checksums = { files: {} };
  readonly mtime = new Date();

  async buffer(name: string, data: Buffer): Promise<void> {
    this.sums.files[name] = { size: data.length, sha256: createHash('sha256').update(data).digest('hex') };
    await new Promise<void>((resolve, reject) =>
      this.pack.entry({ name, size: data.length, mtime: this.mtime, mode: 0o600 }, data, (err) => (err ? reject(err) : resolve())),
    );
  }

  async file(name: string, source: string, size: number): Promise<void> {
    if (size <= WHOLE) return this.buffer(name, await readFile(source));
    const hash = createHash('sha256');
    const entry = this.pack.entry({ name, size, mtime: this.mtime, mode: 0o600 });
    const input = createReadStream(source, { start: 0, end: size - 1 });
    input.on('data', (chunk) => hash.update(chunk));
    await pipeline(input, entry);
    this.sums.files[name] = { size, sha256: hash.digest('hex') };
  }

  dir(name: string): void {
    this.pack.entry({ name: `${name}/`, type: 'directory', mtime: this.mtime, mode: 0o700 });
  }

  /** Regular files and folders only: links are left out (a restore never writes through one). */
  async tree(name: string, source: string, warn: (m: string) => void): Promise<void> {
    this.dir(name);
    if (!existsSync(source)) return;
    for (const dirent of await readdir(source, { withFileTypes: true })) {
      const from = path.join(source, dirent.name);
      const to = `${name}/${dirent.name}`;
      try {
        if (dirent.isDirectory()) await this.tree(to, from, warn);
        else if (dirent.isFile()) await this.file(to, from, (await lstat(from)).size);
        else warn(`left out ${to}: not a regular file or folder`);
      } catch (err) {
        // A file removed while we walked is not an error of the backup.
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw err;
      }
    }
  }
}

export async function writeArchive(input: ArchiveInput): Promise<{ sizeBytes: number; files: number; manifest: Manifest }> {
  const manifest: Manifest = {
    format: FORMAT,
    format_version: FORMAT_VERSION,
    service_version: input.version,
    created_at: new Date().toISOString(),
    components: input.components,
    checksums: CHECKSUMS,
    secrets: 'excluded',
    ...(input.database && { database: input.database.manifest }),
  };
  const p = new Packer();
  const tmp = input.partial;
  const written = pipeline(p.pack, createGzip({ level: 1 }), createWriteStream(tmp, { mode: 0o600 }));
  try {
    await p.buffer(MANIFEST, Buffer.from(JSON.stringify(manifest, null, 2)));
    for (const c of input.components) {
      if (c === 'database' && input.database) for (const f of input.database.files) await p.file(f.name, f.source, (await stat(f.source)).size);
      else if (c === 'config' && input.configText !== undefined) await p.buffer(CONFIG_ENTRY, Buffer.from(input.configText));
      else if (isFolder(c)) await p.tree(c, path.join(input.home, FOLDERS[c].dir), input.warn);
    }
    const files = Object.keys(p.sums.files).length;
    // checksums.json covers every entry before it, manifest.json included.
    await p.buffer(CHECKSUMS, Buffer.from(JSON.stringify(p.sums, null, 2)));
    p.pack.finalize();
    await written;
    await rename(tmp, input.file);
    return { sizeBytes: (await stat(input.file)).size, files, manifest };
  } catch (err) {
    p.pack.destroy(err as Error);
    await written.catch(() => undefined);
    await rm(tmp, { force: true });
    throw err;
  }
}
