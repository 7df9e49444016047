/** A kernel with agents, memory, audit and backup, its default model on a FakeProvider. */
import path from 'node:path';
import pino from 'pino';
import type { Store } from '@talon/module-sdk';
import { startAgentTestKernel, type AgentTestKernel, type FakeProvider, type TestKernel } from '@talon/testing';
import type { BackupDeps } from '../services/service.ts';

export const KEY = 'backup-test-key-0123456789';
export const auth = { authorization: `Bearer ${KEY}` };

export const MODULES = ['backup', 'audit', 'auth', 'agents', 'memory', 'error-envelope'];

/**
 * `fake`: a provider shared by kernels on one home (a restart, two processes); their stop() leaves it running.
 * `database`: the engine, when a test needs one whatever the run's (TALON_TEST_DB) is.
 */
export async function start(
  options: {
    home?: string;
    extra?: string;
    modules?: string[];
    /** Modules of MODULES to leave out. */
    without?: string[];
    fake?: FakeProvider;
    database?: 'sqlite' | 'postgres';
    heartbeatMs?: number;
  } = {},
): Promise<AgentTestKernel> {
  return startAgentTestKernel({
    database: options.database,
    only: [...MODULES, ...(options.modules ?? [])].filter((m) => !options.without?.includes(m)),
    config: `api_key = "${KEY}"\n${options.extra ?? ''}`,
    fake: options.fake,
    home: options.home,
    keepHome: Boolean(options.home),
    heartbeatMs: options.heartbeatMs,
  });
}

export async function call<T = unknown>(k: TestKernel, path: string, init: { method?: string; json?: unknown } = {}): Promise<{ status: number; body: T }> {
  const res = await k.request(path, { method: init.method ?? 'GET', headers: auth, json: init.json });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

/** What a Backups service needs to finish restores on `store` for `home`, outside a kernel (no events, audit or nodes). */
export function depsFor(home: string, store: Store): BackupDeps {
  return {
    store,
    home,
    dataDir: path.join(home, 'data', 'backup'),
    moduleDir: path.join(import.meta.dirname, '..'),
    version: '0.0.0',
    backupsDir: () => path.join(home, 'backups'),
    log: pino({ level: 'silent' }),
    config: { file: path.join(home, 'config.toml'), read: () => ({}) } as Partial<BackupDeps['config']> as BackupDeps['config'],
  } as Partial<BackupDeps> as BackupDeps;
}
