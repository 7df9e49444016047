/** What the media-local tests share: the known paragraph, word accuracy, what this host has, and a driver to test. */
import { existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { MediaDriver, MediaDriverKit } from '@talon/media';
import type { LocalMediaConfig } from '../config.ts';
import { localMediaDriver } from '../driver.ts';

/** 102 words of plain English read by Flite's rms voice: pocketsphinx gets 97 of them right (measured). */
export const PARAGRAPH =
  'The library in the center of the city opened a new reading room last spring. Students come there every afternoon to study for their ' +
  'examinations, and older visitors read newspapers from many different countries. The building has large windows, comfortable chairs and a ' +
  'small garden behind it. On Saturday mornings a teacher reads stories to young children, and their parents often stay to listen. The ' +
  'library also lends computers and music, and it offers free lessons in several languages. Many people say that it has become the most ' +
  'important meeting place in the neighborhood, because everyone is welcome and nothing costs money.';

export const SENTENCE = 'The library opened a new reading room for students and older visitors.';

const words = (text: string) => text.toLowerCase().match(/[a-z']+/g) ?? [];

/** 1 − word error rate: the edit distance between the word lists (substitutions, insertions, deletions) over the reference's length. */
export function wordAccuracy(reference: string, heard: string): number {
  const ref = words(reference);
  const hyp = words(heard);
  let row = Array.from({ length: hyp.length + 1 }, (_, j) => j);
  for (let i = 1; i <= ref.length; i++) {
    const next = [i];
    for (let j = 1; j <= hyp.length; j++) next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (ref[i - 1] === hyp[j - 1] ? 0 : 1));
    row = next;
  }
  return 1 - row[hyp.length] / ref.length;
}

const MODEL = '/usr/share/pocketsphinx/model/en-us';
const onPath = (program: string) => (process.env.PATH ?? '').split(path.delimiter).some((dir) => dir && existsSync(path.join(dir, program)));

export const has = {
  flite: onPath('flite'),
  pocketsphinx: onPath('pocketsphinx_continuous') && existsSync(path.join(MODEL, 'en-us.lm.bin')),
  ffmpeg: onPath('ffmpeg'),
};

/** The one line a skipped round trip gives. */
export const NO_SYSTEM_ENGINES =
  has.flite && has.pocketsphinx
    ? false
    : 'needs the system packages flite, pocketsphinx and pocketsphinx-en-us (apt install flite pocketsphinx pocketsphinx-en-us ffmpeg)';
export const NO_POCKETSPHINX = has.pocketsphinx ? false : 'needs pocketsphinx and pocketsphinx-en-us (apt install pocketsphinx pocketsphinx-en-us)';

const moduleEntry = path.join(import.meta.dirname, '..', 'index.ts');

/** The local driver over a running kernel's kit, with this configuration. */
export function driverWith(kit: MediaDriverKit, config: Partial<LocalMediaConfig> = {}): MediaDriver {
  const full: LocalMediaConfig = { speech_engine: 'auto', voice: 'rms', max_parallel: 2, pocketsphinx_model: MODEL, ...config };
  return localMediaDriver(kit, () => full, moduleEntry);
}

/**
 * Runs fn with a PATH that holds only these host programs (symlinks), so the rest is missing for real, and the
 * stand-ins of `scripts` (shell scripts: name → body; `dir` is the folder, for files they write).
 */
export async function withOnly<T>(
  programs: string[],
  fn: (dir: string) => Promise<T>,
  scripts: (dir: string) => Record<string, string> = () => ({}),
): Promise<T> {
  const saved = process.env.PATH;
  const dir = mkdtempSync(path.join(tmpdir(), 'talon-path-'));
  for (const p of programs) {
    const found = (saved ?? '').split(path.delimiter).find((d) => d && existsSync(path.join(d, p)));
    if (found) symlinkSync(path.join(found, p), path.join(dir, p));
  }
  for (const [name, body] of Object.entries(scripts(dir))) writeFileSync(path.join(dir, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  process.env.PATH = dir;
  try {
    return await fn(dir);
  } finally {
    process.env.PATH = saved;
    rmSync(dir, { recursive: true, force: true });
  }
}
