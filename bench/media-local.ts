/**
 * Local speech figures: a 102-word paragraph spoken by the media-local driver, with the system's flite binary and
 * with the bundled WebAssembly Flite (median of 5 runs each; the WebAssembly build's first call, which compiles the
 * 14 MB flite.wasm, is reported on its own). Targets (issue 29): ≤ 1 s with the system engine, ≤ 5 s with the WASM
 * one, on 2 cores. The driver runs over the media module's own which/probe and errors, as in the service.
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import type { MediaDriverKit } from '@talon/media';
import { probe, which } from '../modules/media/services/audio/index.ts';
import { isMediaError, mediaError } from '../modules/media/services/kit/errors.ts';
import { localMediaDriver } from '../modules/media-local/driver.ts';
import type { LocalMediaConfig } from '../modules/media-local/config.ts';
import { PARAGRAPH } from '../modules/media-local/test/helpers.ts';
import { median } from './util.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const RUNS = 5;

/** The parts of the kit the local driver's speech uses; the rest is never called here. */
const kit = { error: mediaError, isMediaError, which, probe } as unknown as MediaDriverKit;

function driver(engine: LocalMediaConfig['speech_engine']) {
  const config: LocalMediaConfig = { speech_engine: engine, voice: 'rms', max_parallel: 1, pocketsphinx_model: '/usr/share/pocketsphinx/model/en-us' };
  return localMediaDriver(kit, () => config, path.join(ROOT, 'modules/media-local/index.ts'));
}

/**
 * CPU time (ms) of this process (the WebAssembly worker is a thread of it) and of its finished children (the flite
 * binary: /proc/self/stat's cutime and cstime, in clock ticks of 10 ms). On a shared machine the wall time includes
 * the wait for a core; the CPU time is the steadier figure.
 */
function cpuMs(): number {
  const self = process.cpuUsage();
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  const children = (Number(fields[13]) + Number(fields[14])) * 10;
  return (self.user + self.system) / 1000 + children;
}

async function timeSpeech(engine: LocalMediaConfig['speech_engine']): Promise<{ ms: number; cpu: number; audioMs: number }> {
  const cpu = cpuMs();
  const started = performance.now();
  const { audio } = await driver(engine).synthesize!({ text: PARAGRAPH, signal: new AbortController().signal });
  const ms = performance.now() - started;
  return { ms, cpu: cpuMs() - cpu, audioMs: (await probe(audio)).durationMs ?? 0 };
}

async function runs(engine: LocalMediaConfig['speech_engine']): Promise<{ wall: number[]; cpu: number[] }> {
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const run = await timeSpeech(engine);
    wall.push(run.ms);
    cpu.push(run.cpu);
  }
  return { wall, cpu };
}

const fmt = (ms: number) => `${Math.round(ms)} ms`;
const verdict = (ms: number, limit: number) => `${fmt(ms)} (target ≤ ${limit / 1000} s: ${ms <= limit ? 'met' : 'MISSED'})`;

export async function mediaLocalBench(): Promise<Record<string, string>> {
  const figures: Record<string, string> = { 'load average before (1 min)': loadavg()[0].toFixed(2) };
  const first = await timeSpeech('wasm');
  figures['paragraph'] = `${PARAGRAPH.split(/\s+/).length} words, ${(first.audioMs / 1000).toFixed(1)} s of speech (rms voice)`;
  figures['wasm: first call (compiles flite.wasm)'] = fmt(first.ms);
  const wasm = await runs('wasm');
  figures[`wasm: median of ${RUNS}`] = verdict(median(wasm.wall), 5000);
  figures['wasm: all runs (wall)'] = wasm.wall.map(fmt).join(', ');
  figures['wasm: CPU time, median'] = fmt(median(wasm.cpu));
  if (which('flite')) {
    const system = await runs('system');
    figures[`system flite: median of ${RUNS}`] = verdict(median(system.wall), 1000);
    figures['system flite: all runs (wall)'] = system.wall.map(fmt).join(', ');
    figures['system flite: CPU time, median'] = fmt(median(system.cpu));
  } else {
    figures['system flite'] = 'not installed (apt install flite)';
  }
  figures['load average after (1 min)'] = loadavg()[0].toFixed(2);
  return figures;
}
