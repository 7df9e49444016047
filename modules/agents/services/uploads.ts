/**
 * Uploaded files: bytes in the module's data folder (uploads/), metadata in agents_uploads.
 * Messages reference them by file_id (attachments).
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Store } from '@talon/module-sdk';

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
    private readonly store: Store,
    private readonly root: () => string,
  ) {}

  async save(agentId: string, filename: string, contentType: string, data: Buffer): Promise<UploadRow> {
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
    await this.store.run('INSERT INTO agents_uploads (id, agent_id, filename, content_type, size, path, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)', [
      row.id,
      row.agent_id,
      row.filename,
      row.content_type,
      row.size,
      row.path,
      row.created_at,
    ]);
    return row;
  }

  get(fileId: string): Promise<UploadRow | undefined> {
    return this.store.one<UploadRow>('SELECT * FROM agents_uploads WHERE id = ?', [fileId]);
  }

  read(row: UploadRow): Buffer {
    return readFileSync(row.path);
  }

  /** Files of a killed agent go with it. */
  async deleteAgent(agentId: string): Promise<void> {
    const rows = await this.store.many<UploadRow>('SELECT * FROM agents_uploads WHERE agent_id = ?', [agentId]);
    for (const row of rows) rmSync(row.path, { force: true });
    await this.store.run('DELETE FROM agents_uploads WHERE agent_id = ?', [agentId]);
  }
}
