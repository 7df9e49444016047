/**
 * The tools of connected MCP servers as agent tools (agentHooks.tools): each
 * is `mcp_<server>_<tool>`, described `[MCP:<server>] ...`, granted only to
 * agents whose mcp_servers list names the server (its name or id, or '*').
 * They run through the agents module's tool runner like every tool (grants,
 * input check, hooks), with a time limit and the result cap of [mcp].
 */
import type { AgentRecord, ToolDefinition, ToolOutput } from '@talon/agents';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Connection } from './connection.ts';
import { agentToolName } from './naming.ts';

export interface ToolLimits {
  timeoutMs(conn: Connection): number;
  maxChars(): number;
}

export function attached(agent: AgentRecord, conn: Connection): boolean {
  const list = agent.mcpServers;
  return list.includes('*') || list.includes(conn.spec.name) || list.includes(conn.spec.id);
}

/** Definitions for every tool of every connected server; rebuilt only when a tool list changes (schemas keep their identity). */
export function agentToolDefinitions(connections: readonly Connection[], limits: ToolLimits): ToolDefinition[] {
  const defs: ToolDefinition[] = [];
  for (const conn of connections) {
    if (conn.status !== 'connected') continue;
    for (const tool of conn.tools) {
      defs.push({
        name: agentToolName(conn.spec.name, tool.name),
        description: `[MCP:${conn.spec.name}] ${tool.description}`.trim(),
        inputSchema: tool.inputSchema,
        source: 'mcp',
        exclusiveGrant: true,
        grantedTo: (agent) => attached(agent, conn),
        async execute(input, ctx) {
          try {
            const result = await conn.call(tool.name, input, limits.timeoutMs(conn), ctx.signal);
            return toOutput(result, limits.maxChars());
          } catch (err) {
            return { content: `MCP tool '${tool.name}' of server '${conn.spec.name}' failed: ${(err as Error).message}`, isError: true };
          }
        },
      });
    }
  }
  return defs;
}

/** An MCP result as text for the model: text parts as they are, other parts described, cut at the cap. */
export function toOutput(result: CallToolResult, maxChars: number): ToolOutput {
  const parts: string[] = [];
  for (const part of result.content ?? []) {
    if (part.type === 'text') parts.push(part.text);
    else if (part.type === 'image' || part.type === 'audio') parts.push(`[${part.type}: ${part.mimeType}, ${Math.round((part.data.length * 3) / 4)} bytes]`);
    else if (part.type === 'resource') parts.push('text' in part.resource ? String(part.resource.text) : `[resource ${part.resource.uri}]`);
    else if (part.type === 'resource_link') parts.push(`[resource ${part.uri}${part.name ? ` (${part.name})` : ''}]`);
  }
  if (!parts.length && result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent));
  let content = parts.join('\n');
  if (content.length > maxChars) content = `${content.slice(0, maxChars)}\n[truncated at ${maxChars} characters]`;
  return { content, isError: result.isError === true };
}
