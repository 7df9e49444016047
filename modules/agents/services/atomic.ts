/**
 * Writing a file so that its final name only ever holds the whole of it: the bytes go to a temporary file in the same
 * folder, are flushed to disk (fsync), and the temporary file is renamed over the final name; the folder is flushed
 * too, so the rename survives a power cut. A reader (a download, a backup) never sees half a file.
 */
import { randomUUID } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import path from 'node:path';

/** Temporary files start with it; the sweeper removes old ones a crash left. */
export const TEMP_PREFIX = '.tmp-';

export async function writeAtomic(file: string, data: Uint8Array): Promise<void> {
  const dir = path.dirname(file);
  const temp = path.join(dir, `${TEMP_PREFIX}${randomUUID()}`);
  try {
    const handle = await open(temp, 'wx', 0o600);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
  await syncDir(dir);
}

/** Best effort: some file systems refuse to fsync a folder, and the file itself is already safe. */
async function syncDir(dir: string): Promise<void> {
  try {
    const handle = await open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // ignored, see above
  }
}
