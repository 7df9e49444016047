import { startTestKernel, type TestKernel } from '@talon/module-sdk/testing';

/** A kernel with the memory module and the error envelope; `config` is config.toml text. */
export function startMemoryKernel(config = ''): Promise<TestKernel> {
  return startTestKernel({ only: ['memory', 'error-envelope'], config });
}

export async function json<T = Record<string, unknown>>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

export const AGENT_A = '11111111-1111-4111-8111-111111111111';
export const AGENT_B = '22222222-2222-4222-8222-222222222222';

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { defaultMemoryConfig, type MemoryConfig } from '../config.ts';
import { Memory, type MemoryDeps } from '../services/memory.ts';

const migration = path.join(path.dirname(fileURLToPath(import.meta.url)), '../migrations/0001_memory.sql');

/** The memory services on a private in-memory database, with an injectable clock and config. */
export function memoryOnDisk(options: { now?: () => number; config?: Partial<MemoryConfig>; llm?: MemoryDeps['llm'] } = {}) {
  const db = new Database(':memory:');
  db.pragma('foreign_keys = ON');
  db.exec(readFileSync(migration, 'utf8'));
  const config = defaultMemoryConfig(options.config);
  const memory = new Memory({ db, log: pino({ level: 'silent' }), config: () => config, now: options.now, llm: options.llm });
  return { db, memory, config, close: () => (memory.stop(), db.close()) };
}
