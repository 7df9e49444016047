import { randomUUID } from 'node:crypto';
import { forbidden, badRequest, notFound, requireUuid, type ModuleContext, type Routes } from '@talon/module-sdk';
import { agentHooks, agentRegistry, grantsTool, type ToolCallInfo, type ToolContext, type ToolDefinition, type ToolOutput } from '../../agents/api.ts';
import type { ToolsConfig } from '../config.ts';
import { describeTool, findTool, needsAgent } from '../services/catalog.ts';
import { inputProblem } from '../services/input-validation.ts';
import { invokePolicy, invokeRefusal } from '../services/invoke-policy.ts';
import { operatorRecord } from '../services/operator.ts';

const nameParams = {
  type: 'object',
  properties: { name: { type: 'string', minLength: 1, maxLength: 200 } },
  required: ['name'],
} as const;

const invokeQuery = {
  type: 'object',
  properties: { agent_id: { type: 'string' } },
} as const;

const toolBody = { type: 'object', description: 'the tool input' } as const;

export function toolRoutes(app: Routes, ctx: ModuleContext<ToolsConfig>): void {
  const allTools = (): ToolDefinition[] => ctx.hooks.get(agentHooks).tools.call([]);
  const lookup = (name: string): ToolDefinition => {
    const tool = findTool(allTools(), name);
    if (!tool) throw notFound(`Tool '${name}' not found`);
    return tool;
  };

  app.get('/api/tools', { schema: { summary: 'Every tool agents can use', tags: ['tools'] } }, async () => {
    const tools = allTools().map(describeTool);
    return { tools, total: tools.length };
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
      const tool = findTool(allTools(), requested);
      const refusal = invokeRefusal(invokePolicy(ctx.config.invoke, ctx.kernel.config.effective().tool_invoke), tool?.name ?? requested);
      if (refusal) throw forbidden(refusal);
      if (!tool) throw notFound(`Tool '${requested}' not found`);
      const input = (request.body ?? {}) as Record<string, unknown>;
      const problem = inputProblem(tool.name, tool.inputSchema, input);
      if (problem) throw badRequest(problem);

      const agentId = request.query.agent_id;
      let agent = operatorRecord();
      if (agentId !== undefined) {
        requireUuid(agentId, 'agent_id');
        const found = ctx.use(agentRegistry).get(agentId);
        if (!found) throw notFound(`Agent '${agentId}' not found`);
        if (!grantsTool(found.tools, tool)) throw forbidden(`Agent '${found.name}' is not granted tool '${tool.name}'`);
        agent = found;
      } else if (needsAgent(tool)) {
        throw badRequest(`tool '${tool.name}' needs an agent (workspace): pass ?agent_id=<agent uuid>`);
      }

      // The tool is stopped when the client goes away before the reply.
      const abort = new AbortController();
      const onClose = () => {
        if (!reply.raw.writableFinished) abort.abort();
      };
      reply.raw.on('close', onClose);
      const notices: string[] = [];
      const toolCtx: ToolContext = {
        agent,
        sessionId: agent.sessionId,
        turnId: randomUUID(),
        callId: randomUUID(),
        workspace: agent.workspace,
        signal: abort.signal,
        log: ctx.log.child({ reqId: request.id, tool: tool.name }),
        notifyOwner: (text) => notices.push(text),
      };
      const info: ToolCallInfo = {
        agent,
        sessionId: toolCtx.sessionId,
        turnId: toolCtx.turnId,
        callId: toolCtx.callId,
        tool: tool.name,
        input,
        workspace: agent.workspace,
      };
      const hooks = ctx.hooks.get(agentHooks);
      if (agentId !== undefined) {
        // Checkpoint snapshots and audit happen here, as in the agent loop; a failing tap never blocks the tool.
        await hooks.beforeToolCall.promise(info).catch((err: unknown) => request.log.warn({ err, tool: tool.name }, 'beforeToolCall tap failed'));
      }
      const started = Date.now();
      let output: ToolOutput;
      try {
        output = await tool.execute(input, toolCtx);
      } catch (err) {
        request.log.warn({ err, tool: tool.name }, 'tool threw instead of returning an error result');
        output = { content: `Tool '${tool.name}' failed: ${(err as Error).message}`, isError: true };
      } finally {
        reply.raw.off('close', onClose);
      }
      if (agentId !== undefined) {
        void hooks.afterToolCall
          .promise({ ...info, output, ms: Date.now() - started })
          .catch((err: unknown) => request.log.warn({ err }, 'afterToolCall tap failed'));
      }
      if (notices.length) request.log.info({ tool: tool.name, agent: agent.id }, 'owner notice from a directly invoked tool');
      return { tool: tool.name, is_error: output.isError === true, content: output.content, ...(notices.length ? { owner_notice: notices.join('\n\n') } : {}) };
    },
  );
}
