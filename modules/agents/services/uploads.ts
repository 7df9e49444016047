/**
 * The upload store: files clients uploaded (attachments) and files the service made (media results), bytes in the
 * module's data folder (uploads/<id>.<ext>), metadata in agents_uploads. Every type is sniffed from the bytes, every
 * file is written atomically and keeps its sha256; generated files expire after the retention and a sweeper removes
 * them.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readFile, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { isUuid, type Store } from '@talon/module-sdk';
import type { FileOwner, GeneratedKind, StoredFile, UploadFiles } from '@talon/agents';
import { FileRefused, generatedType, uploadType } from './file-types.ts';
import { writeAtomic, TEMP_PREFIX } from './atomic.ts';

export interface UploadRow {
  id: string;
  agent_id: string | null;
  filename: string;
  content_type: string;
  size: number;
  /**
   * The file's name in the uploads folder (see fileOf). Rows written before names were kept hold a full path; only
   * its last part is used, so a data directory moved or restored elsewhere, or mounted at another path on another
   * node, still finds its files.
   */
  path: string;
  created_at: number;
  /** Null for files stored before hashes were kept. */
  sha256: string | null;
  generated: number;
  kind: GeneratedKind | null;
  source_provider: string | null;
  source_model: string | null;
  expires_at: number | null;
}

/** The [agents] settings the store reads (the current values, so a config change applies to the next file). */
export interface UploadLimits {
  image: number;
  audio: number;
  video: number;
  retentionDays: number;
}

const DAY_MS = 86_400_000;
/** A temporary file this old is left from a write that died (a crash between write and rename). */
const STALE_TEMP_MS = 3_600_000;

type Saved = Pick<UploadRow, 'agent_id' | 'filename' | 'content_type' | 'generated' | 'kind' | 'source_provider' | 'source_model' | 'expires_at'>;

export class UploadStore implements UploadFiles {
  /** `root` gives the folder; asked on first save, since register() does no I/O. */
  constructor(
    private readonly store: Store,
    private readonly root: () => string,
    private readonly limits: () => UploadLimits,
  ) {}

  /** A client's upload: the sniffed type, else its label unless that is active content (then octet-stream). */
  async save(agentId: string, filename: string, label: string | undefined, data: Buffer): Promise<UploadRow> {
    const type = await uploadType(data, label);
    return this.write(data, type?.ext ?? '', {
      agent_id: agentId,
      filename: safeName(filename, 'upload'),
      content_type: type?.mime ?? 'application/octet-stream',
      generated: 0,
      kind: null,
      source_provider: null,
      source_model: null,
      expires_at: null,
    });
  }

  async saveGenerated(input: Parameters<UploadFiles['saveGenerated']>[0]): Promise<StoredFile> {
    const { kind, bytes, source } = input;
    const limits = this.limits();
    if (bytes.length > limits[kind])
      throw new FileRefused(`the ${kind} is ${bytes.length} bytes, over the cap of ${limits[kind]} (generated_${kind}_max_bytes)`);
    const type = await generatedType(kind, bytes);
    const row = await this.write(bytes, type.ext, {
      agent_id: input.agentId ?? null,
      filename: `${safeName(input.name, kind).replace(/\.[a-z][a-z0-9]{1,4}$/i, '')}.${type.ext}`,
      content_type: type.mime,
      generated: 1,
      kind,
      source_provider: source.provider,
      source_model: source.model,
      expires_at: limits.retentionDays > 0 ? Date.now() + limits.retentionDays * DAY_MS : null,
    });
    return storedFile(row);
  }

  get(fileId: string): Promise<UploadRow | undefined> {
    return this.store.one<UploadRow>('SELECT * FROM agents_uploads WHERE id = ?', [fileId]);
  }

  /** Where a row's bytes are on this node: every file lies flat in the uploads folder. */
  fileOf(row: Pick<UploadRow, 'path'>): string {
    return path.join(this.root(), path.basename(row.path));
  }

  readRow(row: UploadRow): Promise<Buffer> {
    return readFile(this.fileOf(row));
  }

  async read(fileId: string, owner?: FileOwner): Promise<{ bytes: Buffer; content_type: string; filename: string } | undefined> {
    const row = await this.owned(fileId, owner);
    if (!row) return undefined;
    const bytes = await readFile(this.fileOf(row)).catch(() => undefined);
    return bytes && { bytes, content_type: row.content_type, filename: row.filename };
  }

  async describe(fileId: string, owner: FileOwner): Promise<StoredFile | undefined> {
    const row = await this.owned(fileId, owner);
    return row && storedFile(row);
  }

  /** The row of a file `owner` may read (see UploadFiles.read); any other file is undefined, as an unknown one is. */
  private async owned(fileId: string, owner: FileOwner | undefined): Promise<UploadRow | undefined> {
    const row = isUuid(fileId) ? await this.get(fileId) : undefined;
    if (!row || !owner) return row;
    const mayRead = row.agent_id === null ? row.generated === 1 : row.agent_id === owner.agentId;
    return mayRead ? row : undefined;
  }

  /** Files of a killed agent go with it. */
  async deleteAgent(agentId: string): Promise<void> {
    const rows = await this.store.many<{ path: string }>('DELETE FROM agents_uploads WHERE agent_id = ? RETURNING path', [agentId]);
    await this.removeFiles(rows);
  }

  /**
   * Removes the generated files past their expiry: the DELETE … RETURNING claims each row once (several processes
   * may sweep one database), and only the claimer removes the file, after the row is gone so none is served without
   * its bytes. Also removes temporary files a crashed write left. Returns how many files expired.
   */
  async sweep(now = Date.now()): Promise<number> {
    const rows = await this.store.many<{ path: string }>(
      'DELETE FROM agents_uploads WHERE generated = 1 AND expires_at IS NOT NULL AND expires_at <= ? RETURNING path',
      [now],
    );
    await this.removeFiles(rows);
    await this.removeStaleTemps(now);
    return rows.length;
  }

  /** The bytes first (atomically), then the row: a row never names a file that is not complete. */
  private async write(data: Buffer, ext: string, meta: Saved): Promise<UploadRow> {
    const id = randomUUID();
    const root = this.root();
    await mkdir(root, { recursive: true });
    const name = ext ? `${id}.${ext}` : id;
    const file = path.join(root, name);
    await writeAtomic(file, data);
    const row: UploadRow = { id, ...meta, size: data.length, path: name, created_at: Date.now(), sha256: createHash('sha256').update(data).digest('hex') };
    try {
      await this.store.run(
        `INSERT INTO agents_uploads (id, agent_id, filename, content_type, size, path, created_at, sha256, generated, kind, source_provider, source_model, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          row.id,
          row.agent_id,
          row.filename,
          row.content_type,
          row.size,
          row.path,
          row.created_at,
          row.sha256,
          row.generated,
          row.kind,
          row.source_provider,
          row.source_model,
          row.expires_at,
        ],
      );
    } catch (err) {
      await rm(file, { force: true });
      throw err;
    }
    return row;
  }

  private async removeFiles(rows: ReadonlyArray<Pick<UploadRow, 'path'>>): Promise<void> {
    for (const row of rows) await rm(this.fileOf(row), { force: true });
  }

  private async removeStaleTemps(now: number): Promise<void> {
    const root = this.root();
    const names = await readdir(root).catch(() => [] as string[]);
    for (const name of names.filter((n) => n.startsWith(TEMP_PREFIX))) {
      const file = path.join(root, name);
      const info = await stat(file).catch(() => undefined);
      if (info && now - info.mtimeMs > STALE_TEMP_MS) await rm(file, { force: true });
    }
  }
}

function storedFile(row: UploadRow): StoredFile {
  return { file_id: row.id, url: `/api/uploads/${row.id}`, content_type: row.content_type, filename: row.filename, size: row.size };
}

/** A file name without folders or control characters, at most 120 characters; `fallback` when nothing is left. */
function safeName(name: string, fallback: string): string {
  // eslint-disable-next-line no-control-regex
  const cleaned = path
    .basename(name.replace(/\\/g, '/'))
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .trim();
  return cleaned && cleaned !== '.' && cleaned !== '..' ? cleaned.slice(0, 120) : fallback;
}
