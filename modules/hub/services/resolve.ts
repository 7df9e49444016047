/**
 * Install sources the skills module hands to the hub: an http(s) git URL (shallow clone), an https .tar.gz URL
 * (download and safe extraction), or a name of the hub registry. Anything else is left to other resolvers.
 */
import path from 'node:path';
import type { ArtifactService } from '@talon/hub';
import type { SourceRefusal, SourceRequest, StagedSource } from '@talon/skills';
import { singleFolder, type Registry } from './registry.ts';

const ARCHIVE = /\.(tar\.gz|tgz)(\?.*)?$/i;
const NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** Refusals are answered as values: the kernel skips a tap that throws. */
export async function resolveSource(
  request: SourceRequest,
  deps: { hub: Registry; artifacts: ArtifactService },
): Promise<StagedSource | SourceRefusal | undefined> {
  try {
    return await stage(request, deps);
  } catch (err) {
    const status = (err as { statusCode?: number }).statusCode;
    if (typeof status === 'number') return { refused: { status, error: (err as Error).message } };
    throw err;
  }
}

async function stage(request: SourceRequest, deps: { hub: Registry; artifacts: ArtifactService }): Promise<StagedSource | undefined> {
  const { source, staging } = request;
  if (/^https?:\/\//i.test(source)) {
    const dir = path.join(staging, 'src');
    if (ARCHIVE.test(source)) {
      const archive = await deps.artifacts.download(source, { maxBytes: 50 * 1024 * 1024 });
      await deps.artifacts.extract(archive, dir, { maxEntries: 1000, maxBytes: 50 * 1024 * 1024, maxFileBytes: 10 * 1024 * 1024, maxRatio: 100 });
      return { dir: singleFolder(dir), origin: { type: 'local', url: source } };
    }
    await deps.artifacts.clone(source, dir);
    return { dir, origin: { type: 'git', url: source } };
  }
  if (NAME.test(source)) {
    const { dir, entry } = await deps.hub.stage('skills', source, path.join(staging, 'registry'));
    return { dir, origin: { type: 'registry', slug: entry.slug, version: entry.version } };
  }
  return undefined;
}
