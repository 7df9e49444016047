/** Real media files for the audio tests, made by the host's ffmpeg in a temporary folder. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { which } from '../services/audio/index.ts';

/** The one line a skipped audio test gives. */
export const NO_FFMPEG = which('ffmpeg') && which('ffprobe') ? false : 'ffmpeg is not installed (apt install ffmpeg)';

export interface Maker {
  /** The temporary folder the files are made in (removed by remove()). */
  dir: string;
  /** ffmpeg's output for these arguments (after -y -i lavfi…), as bytes. */
  make(source: string, args: string[], name: string): Buffer;
  /** A 440 Hz sine of `seconds` at `rate`, mono unless `channels`. */
  sine(seconds: number, rate: number, args: string[], name: string, channels?: number): Buffer;
  remove(): void;
}

export function maker(): Maker {
  const dir = mkdtempSync(path.join(tmpdir(), 'talon-audio-test-'));
  const make = (source: string, args: string[], name: string) => {
    const out = path.join(dir, name);
    execFileSync('ffmpeg', ['-nostdin', '-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', source, ...args, out], { timeout: 60_000 });
    return readFileSync(out);
  };
  return {
    dir,
    make,
    sine: (seconds, rate, args, name, channels = 1) =>
      make(`sine=frequency=440:sample_rate=${rate}:duration=${seconds}`, ['-ac', String(channels), ...args], name),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Runs fn with PATH pointing at an empty folder: which() then finds no ffmpeg or ffprobe (the fallback for real). */
export async function withoutPrograms<T>(fn: () => Promise<T>): Promise<T> {
  const saved = process.env.PATH;
  const empty = mkdtempSync(path.join(tmpdir(), 'talon-empty-path-'));
  process.env.PATH = empty;
  try {
    return await fn();
  } finally {
    process.env.PATH = saved;
    rmSync(empty, { recursive: true, force: true });
  }
}

/** The root mean square of a 16-bit PCM WAV's samples (0 = silence). */
export function rms(wav: Buffer, dataOffset: number): number {
  let sum = 0;
  let n = 0;
  for (let at = dataOffset; at + 1 < wav.length; at += 2, n++) sum += wav.readInt16LE(at) ** 2;
  return n ? Math.sqrt(sum / n) : 0;
}

/**
 * Runs fn with PATH holding only these stand-in programs (shell scripts): a fake ffmpeg that records its arguments,
 * or one that hangs. `dir` is their folder, for files the scripts write.
 */
export async function withFakePrograms<T>(scripts: (dir: string) => Record<string, string>, fn: (dir: string) => Promise<T>): Promise<T> {
  const saved = process.env.PATH;
  const dir = mkdtempSync(path.join(tmpdir(), 'talon-fake-programs-'));
  for (const [name, body] of Object.entries(scripts(dir))) writeFileSync(path.join(dir, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  process.env.PATH = dir;
  try {
    return await fn(dir);
  } finally {
    process.env.PATH = saved;
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A WAV of `dataBytes` of silence whose fmt chunk says what the test writes (a forger's header). */
export function wavWith(
  fmt: { code?: number; channels?: number; rate: number; byteRate: number; blockAlign: number; bits?: number },
  dataBytes = 3000,
): Buffer {
  const head = Buffer.alloc(44);
  head.write('RIFF', 0, 'latin1');
  head.writeUInt32LE(36 + dataBytes, 4);
  head.write('WAVEfmt ', 8, 'latin1');
  head.writeUInt32LE(16, 16);
  head.writeUInt16LE(fmt.code ?? 1, 20);
  head.writeUInt16LE(fmt.channels ?? 1, 22);
  head.writeUInt32LE(fmt.rate, 24);
  head.writeUInt32LE(fmt.byteRate, 28);
  head.writeUInt16LE(fmt.blockAlign, 32);
  head.writeUInt16LE(fmt.bits ?? 16, 34);
  head.write('data', 36, 'latin1');
  head.writeUInt32LE(dataBytes, 40);
  return Buffer.concat([head, Buffer.alloc(dataBytes)]);
}
