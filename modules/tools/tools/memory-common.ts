import type { ToolContext, ToolOutput } from '@talon/agents';
import type { KvMemory } from '@talon/memory';
import type { ToolDeps } from '../services/deps.ts';
import { memoryKeyAllowed } from '../services/globs.ts';
import { fail } from '../services/result.ts';

const KEY_RE = /^[A-Za-z0-9_.-]+$/;

export const NO_MEMORY = 'Memory is not available: the memory module is not loaded.';

/** The memory service, or the error result telling the model it is missing. */
export function memoryOf(deps: ToolDeps): KvMemory | ToolOutput {
  return deps.memory() ?? fail(NO_MEMORY);
}

export const isOutput = (v: KvMemory | ToolOutput): v is ToolOutput => 'content' in v && typeof (v as ToolOutput).content === 'string';

/** Key rules of the reference: 1..256 bytes of [A-Za-z0-9_.-]. */
export function keyProblem(key: unknown): string | undefined {
  if (typeof key !== 'string' || key.length === 0) return "'key' must be a non-empty string";
  if (Buffer.byteLength(key) > 256) return "'key' must be at most 256 bytes";
  if (!KEY_RE.test(key)) return `invalid key '${key}': only letters, digits, '_', '.' and '-' are allowed`;
  return undefined;
}

export function accessProblem(ctx: ToolContext, kind: 'memory_read' | 'memory_write', key?: string): string | undefined {
  const patterns = ctx.agent.manifest.capabilities[kind] ?? [];
  const verb = kind === 'memory_read' ? 'read' : 'write';
  if (!patterns.length) return `Memory ${verb} is not permitted: the agent manifest's capabilities.${kind} is empty`;
  if (key !== undefined && !memoryKeyAllowed(patterns, key))
    return `Memory ${verb} of key '${key}' is not permitted by capabilities.${kind} (${patterns.join(', ')})`;
  return undefined;
}
