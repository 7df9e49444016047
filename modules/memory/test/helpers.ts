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
