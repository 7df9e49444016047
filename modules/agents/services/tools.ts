/**
 * Tool lookup rules shared by the loop and direct invocation: a tool is found
 * by its name, then by an alias; an agent's tool list grants it by '*', its
 * name or one of its aliases.
 */
import type { AgentRecord, ToolDefinition } from '@talon/agents';

export function grants(agentTools: readonly string[], tool: Pick<ToolDefinition, 'name' | 'aliases'>): boolean {
  return agentTools.includes('*') || agentTools.includes(tool.name) || (tool.aliases ?? []).some((a) => agentTools.includes(a));
}

/** The agent's tool list, or the tool's own grant (a skill tool for an agent with the skill; only that one when exclusive). */
export function grantsAgent(agent: AgentRecord, tool: ToolDefinition): boolean {
  if (tool.exclusiveGrant) return Boolean(tool.grantedTo?.(agent));
  return grants(agent.tools, tool) || Boolean(tool.grantedTo?.(agent));
}

export function findTool(tools: readonly ToolDefinition[], name: string): ToolDefinition | undefined {
  return tools.find((t) => t.name === name) ?? tools.find((t) => (t.aliases ?? []).includes(name));
}

/** The first contribution of a name wins. */
export function dedupe(tools: readonly ToolDefinition[]): ToolDefinition[] {
  const seen = new Set<string>();
  return tools.filter((t) => !seen.has(t.name) && seen.add(t.name));
}
