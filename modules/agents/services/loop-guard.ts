/**
 * Loop guard of one turn: identical tool calls (same name, same input as
 * canonical JSON with sorted keys) are warned about from the `warn`-th call,
 * not run from the `block`-th, and the turn stops once `maxBlocked` calls
 * were blocked.
 */
import { createHash } from 'node:crypto';

export interface LoopGuardConfig {
  warn_threshold: number;
  block_threshold: number;
  max_blocked: number;
}

export type Verdict = { kind: 'allow' } | { kind: 'warn'; message: string } | { kind: 'block'; message: string } | { kind: 'stop'; message: string };

export class LoopGuard {
  private readonly counts = new Map<string, number>();
  private blocked = 0;

  constructor(private readonly config: LoopGuardConfig) {}

  check(tool: string, input: unknown): Verdict {
    const key = createHash('sha256')
      .update(`${tool}|${canonicalJson(input)}`)
      .digest('hex');
    const count = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, count);
    if (count >= this.config.block_threshold) {
      this.blocked++;
      if (this.blocked >= this.config.max_blocked) {
        return {
          kind: 'stop',
          message: `loop guard: ${this.blocked} tool calls were blocked in this turn (last: '${tool}' called ${count} times with identical parameters); the agent appears to be stuck`,
        };
      }
      return {
        kind: 'block',
        message: `Blocked: tool '${tool}' called ${count} times with identical parameters. It was not run. Try a different approach or different parameters.`,
      };
    }
    if (count >= this.config.warn_threshold) {
      return { kind: 'warn', message: `Warning: tool '${tool}' has been called ${count} times with identical parameters. Consider a different approach.` };
    }
    return { kind: 'allow' };
  }

  get blockedCount(): number {
    return this.blocked;
  }
}

/** JSON with object keys sorted at every level; arrays keep their order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value as Record<string, unknown>)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
