/**
 * Uploaded files: bytes in the module's data folder (uploads/), metadata in agents_uploads.
 * Messages reference them by file_id (attachments).
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Database } from 'better-sqlite3';
import { prepared } from '@talon/module-sdk';

export interface UploadRow {
  id: string;
  agent_id: string;
  filename: string;
  content_type: string;
  size: number;
  path: string;
  created_at: string;
}

export class UploadStore {
  /** `root` gives the folder; asked on first save, since register() does no I/O. */
  constructor(
    private readonly db: Database,
    private readonly root: () => string,
  ) {}

  save(agentId: string, filename: string, contentType: string, data: Buffer): UploadRow {
    const id = randomUUID();
    const root = this.root();
    mkdirSync(root, { recursive: true });
    const row: UploadRow = {
      id,
      agent_id: agentId,
      filename: path.basename(filename) || 'upload',
      content_type: contentType || 'application/octet-stream',
      size: data.length,
      path: path.join(root, id),
      created_at: new Date().toISOString(),
    };
    writeFileSync(row.path, data);
    prepared(
      this.db,
      'INSERT INTO agents_uploads (id, agent_id, filename, content_type, size, path, created_at) VALUES (@id, @agent_id, @filename, @content_type, @size, @path, @created_at)',
    ).run(row);
    return row;
  }

  get(fileId: string): UploadRow | undefined {
    return prepared(this.db, 'SELECT * FROM agents_uploads WHERE id = ?').get(fileId) as UploadRow | undefined;
  }

  read(row: UploadRow): Buffer {
    return readFileSync(row.path);
  }

  /** Files of a killed agent go with it. */
  deleteAgent(agentId: string): void {
    const rows = prepared(this.db, 'SELECT * FROM agents_uploads WHERE agent_id = ?').all(agentId) as UploadRow[];
    for (const row of rows) rmSync(row.path, { force: true });
    prepared(this.db, 'DELETE FROM agents_uploads WHERE agent_id = ?').run(agentId);
  }
}
