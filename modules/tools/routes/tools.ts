/** GET /api/tools, GET /api/tools/{name} and POST /api/tools/{name}/invoke (the agents module runs the tool). */
import { forbidden, notFound, requireUuid, type Routes } from '@talon/module-sdk';
import type { AgentTools, ToolDefinition } from '@talon/agents';
import type { ToolsConfig } from '../config.ts';
import { describeTool } from '../services/catalog.ts';
import { invokePolicy, invokeRefusal } from '../services/invoke-policy.ts';

const nameParams = {
  type: 'object',
  properties: { name: { type: 'string', minLength: 1, maxLength: 200 } },
  required: ['name'],
} as const;

const invokeQuery = {
  type: 'object',
  properties: { agent_id: { type: 'string', description: 'the agent the tool runs as (its workspace and grants)' } },
} as const;

const toolBody = { type: 'object', description: 'the tool input' } as const;

export function toolRoutes(app: Routes, tools: AgentTools, config: () => ToolsConfig): void {
  const lookup = (name: string): ToolDefinition => {
    const tool = tools.find(name);
    if (!tool) throw notFound(`Tool '${name}' not found`);
    return tool;
  };

  app.get('/api/tools', { schema: { summary: 'Every tool agents can use', tags: ['tools'] } }, async () => {
    const list = tools.list().map(describeTool);
    return { tools: list, total: list.length };
  });

  app.get('/api/tools/:name', { schema: { summary: 'One tool (aliases resolve)', tags: ['tools'], params: nameParams } }, async (request) => {
    return describeTool(lookup(request.params.name));
  });

  app.post(
    '/api/tools/:name/invoke',
    {
      schema: {
        summary: 'Run a tool directly (gated by [tools.invoke] / [tool_invoke])',
        tags: ['tools'],
        params: nameParams,
        querystring: invokeQuery,
        body: toolBody,
      },
    },
    async (request, reply) => {
      const requested = request.params.name;
      const tool = tools.find(requested);
      // The gate is checked on the canonical name (an alias cannot slip past it), before an unknown name is a 404.
      const refusal = invokeRefusal(invokePolicy(config()), tool?.name ?? requested);
      if (refusal) throw forbidden(refusal);
      if (!tool) throw notFound(`Tool '${requested}' not found`);
      const agentId = request.query.agent_id === undefined ? undefined : requireUuid(request.query.agent_id, 'agent_id');
      // The tool is stopped when the client goes away before the reply.
      const abort = new AbortController();
      const onClose = () => {
        if (!reply.raw.writableFinished) abort.abort();
      };
      reply.raw.on('close', onClose);
      const input = (request.body ?? {}) as Record<string, unknown>;
      const result = await tools
        .invoke({ tool: tool.name, input, agentId, signal: abort.signal, origin: 'http' })
        .finally(() => reply.raw.off('close', onClose));
      const { output, ownerNotices } = result;
      if (ownerNotices.length) request.log.info({ tool: result.tool, agent_id: agentId }, 'owner notice from a directly invoked tool');
      return {
        tool: result.tool,
        is_error: output.isError === true,
        content: output.content,
        ...(ownerNotices.length ? { owner_notice: ownerNotices.join('\n\n') } : {}),
      };
    },
  );
}
