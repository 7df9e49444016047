import { startTestKernel, type TestKernel } from '@talon/testing';

/** A kernel with the memory module and the error envelope; `config` is config.toml text. */
export function startMemoryKernel(config = ''): Promise<TestKernel> {
  return startTestKernel({ only: ['memory', 'error-envelope'], config });
}

export async function json<T = Record<string, unknown>>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

export const AGENT_A = '11111111-1111-4111-8111-111111111111';
export const AGENT_B = '22222222-2222-4222-8222-222222222222';

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { openPostgresTestStore, openTestStore } from '@talon/testing';
import { defaultMemoryConfig, type MemoryConfig } from '../config.ts';
import { Memory, type MemoryDeps } from '../services/memory.ts';

const moduleDir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The memory services on a private database file (migrations applied, the foreign-await check on), with an
 * injectable clock and config. `file` opens another connection to an existing one (a second process). With
 * TALON_TEST_DB=postgres (and no `file`), on a fresh PostgreSQL database instead.
 */
export async function memoryOnDisk(
  options: { now?: () => number; config?: Partial<MemoryConfig>; llm?: MemoryDeps['llm']; file?: string; feed?: MemoryDeps['feed'] } = {},
) {
  const opened =
    process.env.TALON_TEST_DB === 'postgres' && !options.file
      ? { ...(await openPostgresTestStore([moduleDir])), file: undefined }
      : openTestStore(options.file ? [] : [moduleDir], options.file);
  const config = defaultMemoryConfig(options.config);
  const memory = new Memory({
    store: opened.store,
    log: pino({ level: 'silent' }),
    config: () => config,
    now: options.now,
    llm: options.llm,
    feed: options.feed,
  });
  await memory.init();
  return { store: opened.store, file: opened.file, memory, config, close: async () => (memory.stop(), await opened.close()) };
}
