/**
 * The tools an agent may use: every ToolDefinition contributed through the
 * agentHooks.tools waterfall, filtered by the agent's tool list ('*' = all;
 * a name may be the tool's name or one of its aliases).
 */
import { grantsTool, type AgentRecord, type ToolDefinition } from '../api.ts';

export function allowedTools(all: readonly ToolDefinition[], agent: AgentRecord): ToolDefinition[] {
  return dedupe(all.filter((t) => grantsTool(agent.tools, t)));
}

/** A tool by the name the model used (its name or an alias). */
export function findTool(tools: readonly ToolDefinition[], name: string): ToolDefinition | undefined {
  return tools.find((t) => t.name === name) ?? tools.find((t) => (t.aliases ?? []).includes(name));
}

function dedupe(tools: readonly ToolDefinition[]): ToolDefinition[] {
  const seen = new Set<string>();
  return tools.filter((t) => !seen.has(t.name) && seen.add(t.name));
}
