/**
 * Names agents see for MCP tools: `mcp_<server>_<tool>`, lower-case, every
 * character outside [a-z0-9_] becomes '_'. LLM providers take at most 64
 * characters, so a longer name keeps its first 57 and ends in '_' and a
 * 6-character hash of the full name (still unique). Calls are routed by a
 * table built when tools are listed, never by splitting the name (splitting on
 * '_' broke hyphenated server names in the reference system).
 */
import { createHash } from 'node:crypto';

const MAX = 64;

export function sanitise(part: string): string {
  return part.toLowerCase().replace(/[^a-z0-9_]/g, '_');
}

export function agentToolName(server: string, tool: string): string {
  const full = `mcp_${sanitise(server)}_${sanitise(tool)}`;
  if (full.length <= MAX) return full;
  const hash = createHash('sha256').update(full).digest('hex').slice(0, 6);
  return `${full.slice(0, MAX - 7)}_${hash}`;
}
