/**
 * Reads an archive into a staging folder and checks it before anything of the service is touched: the
 * first entry must be our manifest, every name must stay inside its component, only files and folders,
 * and every file must match checksums.json (no file missing, none extra). Any failure is a BadArchive.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { finished } from 'node:stream/promises';
import { once } from 'node:events';
import { createGunzip } from 'node:zlib';
import type * as TarStream from 'tar-stream';
import type { Header } from 'tar-stream';
import { lazyRequire } from '@talon/module-sdk';
import {
  CHECKSUMS,
  COMPONENTS,
  FORMAT,
  FORMAT_VERSION,
  MANIFEST,
  type Checksums,
  type DatabaseManifest,
  type Manifest,
  type TableEntry,
} from './components.ts';

/** tar-stream is loaded with the first archive, not at start-up. */
const tarStream = lazyRequire<typeof TarStream>(import.meta.url, 'tar-stream');

export class BadArchive extends Error {}

const SAFE_SEGMENT = /^(?!\.{1,2}$)[^/\\\0]+$/;

function safeName(name: string): string {
  const clean = name.replace(/\/$/, '');
  const segments = clean.split('/');
  if (!clean || clean.startsWith('/') || !segments.every((s) => SAFE_SEGMENT.test(s))) throw new BadArchive(`unsafe entry name '${name}'`);
  return clean;
}

/** An archive entry as tar-stream yields it. */
type Entry = AsyncIterable<Buffer> & { header: Header; resume(): unknown };

const small = async (stream: AsyncIterable<Buffer>, limit: number): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += chunk.length;
    if (size > limit) throw new BadArchive('a metadata entry is too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
};

function readManifest(data: Buffer): Manifest {
  let m: Manifest;
  try {
    m = JSON.parse(data.toString('utf8')) as Manifest;
  } catch {
    throw new BadArchive('manifest.json is not JSON');
  }
  if (m.format !== FORMAT) throw new BadArchive('not a Talon backup (manifest format)');
  if (m.format_version !== FORMAT_VERSION)
    throw new BadArchive(`backup format version ${m.format_version} is not supported (this service reads ${FORMAT_VERSION})`);
  if (!Array.isArray(m.components) || !m.components.every((c) => (COMPONENTS as readonly string[]).includes(c)))
    throw new BadArchive('manifest lists unknown components');
  if (m.database !== undefined) checkDatabaseManifest(m.database);
  return m;
}

/** A table file's name: what pg-export writes (the table name, percent-encoded), never a path. */
const TABLE_FILE = /^[A-Za-z0-9_.%-]+\.jsonl$/;

function checkDatabaseManifest(d: DatabaseManifest): void {
  if (d.engine !== 'sqlite' && d.engine !== 'postgres') throw new BadArchive(`manifest names an unknown database engine '${String(d.engine)}'`);
  if (d.tables === undefined) return;
  const valid = (t: TableEntry) =>
    typeof t?.name === 'string' && typeof t.file === 'string' && TABLE_FILE.test(t.file) && Number.isSafeInteger(t.rows) && t.rows >= 0;
  if (!Array.isArray(d.tables) || !d.tables.every(valid)) throw new BadArchive('manifest lists its tables wrongly');
}

export interface Staged {
  manifest: Manifest;
  /** name → SHA-256 as read. */
  files: Map<string, string>;
}

/** Extracts `file` into `staging/files` and checks it; without a staging folder only the manifest is read (listings). */
export async function extractArchive(file: string, staging: string | undefined): Promise<Staged> {
  const hashes = new Map<string, { size: number; sha256: string }>();
  let manifest: Manifest | undefined;
  let sums: Checksums | undefined;
  const extract = tarStream().extract();
  const gunzip = createGunzip();
  const input = createReadStream(file);
  for (const s of [input, gunzip]) s.on('error', (err: Error) => extract.destroy(err));
  input.pipe(gunzip).pipe(extract);
  try {
    for await (const entry of extract as AsyncIterable<Entry>) {
      const { header } = entry;
      const name = safeName(header.name);
      if (!manifest) {
        if (name !== MANIFEST || header.type !== 'file') throw new BadArchive('not a Talon backup (manifest.json is not the first entry)');
        const data = await small(entry, 1 << 20);
        manifest = readManifest(data);
        hashes.set(MANIFEST, { size: data.length, sha256: createHash('sha256').update(data).digest('hex') });
        if (!staging) return { manifest, files: new Map() };
      } else if (name === CHECKSUMS) {
        sums = JSON.parse((await small(entry, 64 << 20)).toString('utf8')) as Checksums;
      } else {
        if (sums) throw new BadArchive(`entry '${name}' after checksums.json`);
        const stored = await store(entry, name, manifest, staging!);
        if (stored) hashes.set(name, stored);
      }
    }
  } catch (err) {
    if (err instanceof BadArchive) throw err;
    throw new BadArchive(`the archive cannot be read: ${(err as Error).message}`);
  } finally {
    input.destroy();
  }
  if (!manifest) throw new BadArchive('not a Talon backup (no manifest.json)');
  return { manifest, files: checked(hashes, sums) };
}

/** Writes one entry into the staging folder; answers the file's size and hash (nothing for a folder). */
async function store(entry: Entry, name: string, manifest: Manifest, staging: string): Promise<{ size: number; sha256: string } | undefined> {
  const component = name.split('/')[0];
  if (!(manifest.components as string[]).includes(component)) throw new BadArchive(`entry '${name}' is outside the listed components`);
  const target = path.join(staging, 'files', name);
  if (entry.header.type === 'directory') {
    await mkdir(target, { recursive: true });
    entry.resume();
    return undefined;
  }
  if (entry.header.type !== 'file') throw new BadArchive(`entry '${name}' is a ${entry.header.type}, only files and folders are restored`);
  await mkdir(path.dirname(target), { recursive: true });
  const hash = createHash('sha256');
  let size = 0;
  const out = createWriteStream(target, { mode: 0o600 });
  for await (const chunk of entry) {
    hash.update(chunk);
    size += chunk.length;
    if (!out.write(chunk)) await once(out, 'drain');
  }
  out.end();
  await finished(out);
  return { size, sha256: hash.digest('hex') };
}

/** Every file listed with the same hash and size, and nothing that is not listed. */
function checked(hashes: Map<string, { size: number; sha256: string }>, sums: Checksums | undefined): Map<string, string> {
  if (!sums || typeof sums.files !== 'object' || sums.files === null) throw new BadArchive('checksums.json is missing: the archive is incomplete');
  const files = new Map<string, string>();
  for (const [name, want] of Object.entries(sums.files)) {
    const got = hashes.get(name);
    if (!got) throw new BadArchive(`'${name}' is listed in checksums.json but missing from the archive`);
    if (got.sha256 !== want.sha256 || got.size !== want.size) throw new BadArchive(`'${name}' does not match its checksum`);
    files.set(name, got.sha256);
  }
  for (const name of hashes.keys()) if (!(name in sums.files)) throw new BadArchive(`'${name}' has no checksum`);
  return files;
}
