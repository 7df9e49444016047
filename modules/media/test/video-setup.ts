/** Shared by the video tests and their child process: the kernel they boot, and the scripted driver's call log. */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { TestKernelOptions } from '@talon/testing';
import type { MediaCallRecord } from '@talon/media';

/** A line of the scripted driver's call log (test/fixtures/modules/media-scripted writes them). */
export interface ScriptedCall {
  op: 'submit' | 'poll-start' | 'poll-end' | 'completed' | 'failed' | 'cancel' | 'overlap' | 'metered';
  /** The provider task id; for 'metered', our task_id. */
  task: string;
  /** Which loaded copy of the driver module (one per kernel). */
  copy: string;
  pid: number;
  at: number;
  record?: MediaCallRecord;
}

export const scriptedModule = path.resolve(import.meta.dirname, '../../../test/fixtures/modules/media-scripted');
export const sampleMp4 = path.resolve(import.meta.dirname, '../../../test/fixtures/media/sample.mp4');

/** Every provider key a test run might inherit: cleared, so no test reaches a real, billed provider. */
export function clearProviderEnv(): void {
  for (const key of Object.keys(process.env)) if (/_API_KEY$|^GOOGLE_CLOUD|^MINIMAX_/.test(key)) delete process.env[key];
}

/** The media module with the scripted driver; polls every 20-50 ms; beats every 200 ms (a dead process is seen in ~0.6 s). */
export function videoKernelOptions(): TestKernelOptions {
  return {
    only: ['media', 'media-scripted', 'error-envelope'],
    heartbeatMs: 200,
    config: [
      `module_paths = ["${scriptedModule}"]`,
      '[media]',
      'provider_order = ["scripted"]',
      'video_poll_first_secs = 0.02',
      'video_poll_factor = 1.5',
      'video_poll_max_secs = 0.05',
      '',
    ].join('\n'),
  };
}

/** The scripted driver's calls on this home (all processes), optionally of one task (its provider task id). */
export function scriptedCalls(home: string): ScriptedCall[] {
  const file = path.join(home, 'data', 'media-scripted', 'calls.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as ScriptedCall);
}

export const count = (calls: ScriptedCall[], op: ScriptedCall['op']) => calls.filter((c) => c.op === op).length;
