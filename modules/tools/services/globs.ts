/**
 * Capability globs of agent manifests (network hosts, shell commands, memory
 * keys). '*' matches anything, including '/' and '.', because the patterns are
 * about strings such as "git *" or "*.example.com", not file paths.
 */
import picomatch from 'picomatch';

// Compiled on each use (a handful of patterns per tool call), so the module keeps no cache of its own.
export function globMatch(pattern: string, value: string): boolean {
  return pattern === '*' || picomatch.isMatch(value, pattern, { bash: true, dot: true, nocase: false });
}

export const anyGlob = (patterns: readonly string[], value: string): boolean => patterns.some((p) => globMatch(p, value));

/** Memory key capabilities: 'self.*' grants the agent's own namespace, which is all a per-agent store holds. */
export function memoryKeyAllowed(patterns: readonly string[], key: string): boolean {
  return patterns.some((p) => p === 'self.*' || p === 'self' || globMatch(p, key));
}
