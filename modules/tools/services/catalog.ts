import type { ToolDefinition } from '../../agents/api.ts';

/** Finds a tool by its name, then by an alias (file_read ← read_file). */
export function findTool(tools: readonly ToolDefinition[], name: string): ToolDefinition | undefined {
  return tools.find((t) => t.name === name) ?? tools.find((t) => t.aliases?.includes(name));
}

/** Whether POST invoke may run the tool without an agent (only tools that say so). */
export const needsAgent = (tool: ToolDefinition): boolean => (tool as { requiresAgent?: unknown }).requiresAgent !== false;

export function describeTool(tool: ToolDefinition) {
  return { name: tool.name, description: tool.description, input_schema: tool.inputSchema, source: tool.source ?? 'unknown', aliases: tool.aliases ?? [] };
}
