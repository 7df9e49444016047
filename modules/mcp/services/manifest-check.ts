/**
 * agentHooks.checkManifest for the names an agent manifest gives MCP: each of `mcp_servers` must be a configured
 * server (config.toml or the API; by name or id) or '*'. A tool `mcp_<server>_<tool>` of a configured server that
 * is not connected yet (connecting, failed, stopped) is vouched for: its tools are known only once it connects. A
 * connected server lists its tools, so an `mcp_` name it does not list stays unknown, as does one of no server.
 */
import type { ManifestCheck } from '@talon/agents';
import { sanitise } from './naming.ts';

export interface ServerView {
  spec: { id: string; name: string };
  status: string;
}

export function checkMcpNames({ manifest, unknownTools, problems }: ManifestCheck, servers: readonly ServerView[]): void {
  for (const name of unknownTools) {
    if (servers.some((s) => s.status !== 'connected' && name.startsWith(`mcp_${sanitise(s.spec.name)}_`))) unknownTools.delete(name);
  }
  const listed = manifest.extra.mcp_servers;
  const names = typeof listed === 'string' ? [listed] : Array.isArray(listed) ? listed.filter((v): v is string => typeof v === 'string') : [];
  for (const name of names) {
    if (name === '*' || servers.some((s) => s.spec.name === name || s.spec.id === name)) continue;
    problems.push({ field: 'mcp_servers', message: `unknown MCP server '${name}': it is not configured (POST /api/mcp/servers adds one)` });
  }
}
