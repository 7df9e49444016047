import type { ToolDefinition } from '@talon/agents';

/** A tool as GET /api/tools shows it. */
export function describeTool(tool: ToolDefinition) {
  return { name: tool.name, description: tool.description, input_schema: tool.inputSchema, source: tool.source ?? 'unknown', aliases: tool.aliases ?? [] };
}
