/**
 * What comes from outside, handled safely: downloads through the SSRF-checked client, shallow git clones of
 * http(s) URLs only (the host checked first; other protocols refused), and tar.gz extraction that refuses links,
 * special entries and paths leaving the folder, within count, size and ratio limits.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import type * as TarStream from 'tar-stream';
import { HttpError, badRequest, forbidden, isInside, lazyRequire, notFound } from '@talon/module-sdk';
import type { ArtifactService, ExtractLimits } from '@talon/hub';
import type { NetFetch } from '@talon/net';

/** tar-stream is loaded with the first archive, not at start-up. */
const tarStream = lazyRequire<typeof TarStream>(import.meta.url, 'tar-stream');

export interface ArtifactDeps {
  net: () => NetFetch | undefined;
  allowHosts: () => readonly string[];
  timeoutMs: () => number;
}

function net(deps: ArtifactDeps): NetFetch {
  const n = deps.net();
  if (!n) throw new HttpError(503, 'downloads need the net module (its SSRF-checked client) and it is not running');
  return n;
}

const refusal = (err: unknown) => ((err as Error).name === 'FetchRefused' ? forbidden((err as Error).message) : err);

export function artifacts(deps: ArtifactDeps): ArtifactService {
  return {
    async clone(url, dest, options = {}) {
      const parsed = new URL(url);
      if (!options.trusted) {
        if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw badRequest(`git URL '${url}' must use https or http`);
        await net(deps)
          .check(url, { allowHosts: deps.allowHosts() })
          .catch((err: unknown) => {
            throw refusal(err);
          });
      }
      const git = safeGit(deps.timeoutMs());
      // Only the web protocols (and, for a registry the operator configured, local ones): no ext::, no ssh.
      const allow = options.trusted ? ['-c', 'protocol.file.allow=always'] : ['-c', 'protocol.file.allow=never'];
      try {
        await git.raw([...allow, '-c', 'protocol.ext.allow=never', '-c', 'protocol.ssh.allow=never', 'clone', '--depth', '1', '--quiet', '--', url, dest]);
      } catch (err) {
        const reason = (err as Error).message.split('\n')[0];
        // A URL that names no repository is the client's mistake (404); anything else is the remote's (502).
        if (/not found|does not appear to be a git repository/i.test(reason)) throw notFound(`no git repository at '${url}'`);
        throw new HttpError(502, `git clone of '${url}' failed: ${reason}`);
      }
    },
    async download(url, options) {
      try {
        const res = await net(deps).fetch({
          url,
          timeoutMs: deps.timeoutMs(),
          maxBytes: options.maxBytes + 1,
          allowHosts: options.trusted ? ['*'] : deps.allowHosts(),
        });
        if (res.status === 404 || res.status === 410) throw notFound(`nothing to download at '${url}' (HTTP ${res.status})`);
        if (res.status !== 200) throw new HttpError(502, `download of '${url}' answered HTTP ${res.status}`);
        if (res.body.length > options.maxBytes) throw badRequest(`download of '${url}' is larger than ${options.maxBytes} bytes`);
        return res.body;
      } catch (err) {
        throw refusal(err);
      }
    },
    extract: (archive, dest, limits) => extractTarGz(archive, dest, limits),
  };
}

/** simple-git is loaded with the first clone, not at start-up. */
const simpleGitLib = lazyRequire<typeof import('simple-git')>(import.meta.url, 'simple-git');

/** git with a small environment (no editor, pager or askpass program it could be told to run) and a time bound. */
export function safeGit(timeoutMs: number, baseDir?: string) {
  // The protocol settings passed to clone are ours (they narrow what git may do), hence the override.
  return simpleGitLib()
    .simpleGit({ ...(baseDir && { baseDir }), timeout: { block: timeoutMs }, unsafe: { allowUnsafeProtocolOverride: true } })
    .env({
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/',
      GIT_TERMINAL_PROMPT: '0',
      GIT_CONFIG_NOSYSTEM: '1',
    });
}

export async function extractTarGz(archive: Buffer, dest: string, limits: ExtractLimits): Promise<void> {
  let tar: Buffer;
  try {
    tar = gunzipSync(archive, { maxOutputLength: Math.min(limits.maxBytes * 2, archive.length * limits.maxRatio + 1024 * 1024) });
  } catch (err) {
    throw badRequest(`the archive is not a valid .tar.gz within the limits: ${(err as Error).message}`);
  }
  mkdirSync(dest, { recursive: true });
  const extractor = tarStream().extract();
  let entries = 0;
  let bytes = 0;
  const done = new Promise<void>((resolve, reject) => {
    extractor.on('entry', (header, stream, next) => {
      // A refusal destroys the extractor, which errors the open entry stream too: that error is the same refusal.
      stream.on('error', () => undefined);
      const fail = (message: string) => {
        stream.resume();
        extractor.destroy(badRequest(`unsafe archive: ${message}`));
      };
      entries++;
      if (entries > limits.maxEntries) return fail(`more than ${limits.maxEntries} entries`);
      const name = header.name.replace(/^\.\//, '');
      if (header.type !== 'file' && header.type !== 'directory') return fail(`'${name}' is a ${header.type} (only files and folders are allowed)`);
      if (!name || path.isAbsolute(name) || name.split(/[\\/]/).includes('..') || name.includes('\0')) return fail(`'${name}' leaves the extraction folder`);
      const target = path.resolve(dest, name);
      if (!isInside(path.resolve(dest), target)) return fail(`'${name}' leaves the extraction folder`);
      if (header.type === 'directory') {
        mkdirSync(target, { recursive: true });
        return (stream.resume(), next());
      }
      if ((header.size ?? 0) > limits.maxFileBytes) return fail(`'${name}' is larger than ${limits.maxFileBytes} bytes`);
      bytes += header.size ?? 0;
      if (bytes > limits.maxBytes) return fail(`more than ${limits.maxBytes} bytes in total`);
      const chunks: Buffer[] = [];
      stream.on('data', (c: unknown) => void chunks.push(c as Buffer));
      stream.on('end', () => {
        try {
          mkdirSync(path.dirname(target), { recursive: true });
          writeFileSync(target, Buffer.concat(chunks), { flag: 'wx' });
          next();
        } catch (err) {
          extractor.destroy(badRequest(`unsafe archive: '${name}' cannot be written (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`));
        }
      });
    });
    extractor.on('finish', resolve);
    extractor.on('error', reject);
  });
  extractor.end(tar);
  await done;
}
