import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';

/** Writes via a temp file in the same folder and a rename, so readers never see half a file. Creates parent folders. */
export async function writeFileAtomic(target: string, content: string | Buffer): Promise<number> {
  await mkdir(path.dirname(target), { recursive: true });
  const tmp = path.join(path.dirname(target), `.${path.basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await writeFile(tmp, content);
    await rename(tmp, target);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  return typeof content === 'string' ? Buffer.byteLength(content) : content.length;
}
