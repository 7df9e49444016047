import { randomUUID } from 'node:crypto';
import { linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

/**
 * The content of `file`, made by `make()` and written (mode 0600) if the file does not exist yet. Several processes
 * starting together on one home or one shared data directory race here: the content is written whole to a temporary
 * name and linked into place (atomic, refused when the file exists), so none reads a half-written file and the first
 * one's content is everyone's.
 */
export function readOrCreateOnce(file: string, make: () => string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as { code?: string }).code !== 'ENOENT') throw err;
  }
  const content = make();
  const temp = `${file}.${randomUUID()}.tmp`;
  writeFileSync(temp, content, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(temp, file);
    return content;
  } catch (err) {
    const code = (err as { code?: string }).code;
    // A shared file system without hard links: an exclusive open, with the small window the link avoids.
    if (code === 'EPERM' || code === 'ENOTSUP' || code === 'ENOSYS') return createExclusively(file, content);
    if (code !== 'EEXIST') throw err;
    return readFileSync(file, 'utf8');
  } finally {
    rmSync(temp, { force: true });
  }
}

function createExclusively(file: string, content: string): string {
  try {
    writeFileSync(file, content, { mode: 0o600, flag: 'wx' });
    return content;
  } catch (err) {
    if ((err as { code?: string }).code !== 'EEXIST') throw err;
    return readFileSync(file, 'utf8');
  }
}
