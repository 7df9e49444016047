/**
 * The MCP server this service offers (official SDK, stateless Streamable
 * HTTP with JSON answers). Its tools: every agent as `ask_agent_<name>` (send
 * a message, get the reply) and the tools direct invocation permits
 * ([tool_invoke]). Scoped to one agent (the agent header), it offers exactly
 * that agent's tools and runs them as the agent. Every tool runs through the
 * agents module (agentTools.invoke / agentRunner.run), so grants, input
 * checks and tool hooks apply as in a turn.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { HttpError, lazy } from '@talon/module-sdk';
import type { AgentRecord, AgentRegistry, AgentRunner, AgentTools, ToolDefinition } from '@talon/agents';
import type { InvokeGate } from '@talon/tools';
import { sanitise } from './naming.ts';

export interface McpServerDeps {
  version: string;
  registry: () => AgentRegistry;
  runner: () => AgentRunner;
  tools: () => AgentTools;
  /** The [tool_invoke] gate; without the tools module no tool is offered unscoped. */
  gate: () => InvokeGate | undefined;
}

interface Offer {
  tool: Tool;
  run(args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult>;
}

const text = (content: string, isError = false): CallToolResult => ({ content: [{ type: 'text', text: content }], isError });

const askSchema = {
  type: 'object' as const,
  properties: { message: { type: 'string', minLength: 1, description: 'what to tell the agent' } },
  required: ['message'],
};

/** The name an agent is offered under; agents whose names sanitise alike are told apart by their id. */
export function askToolName(agent: AgentRecord, all: readonly AgentRecord[]): string {
  const base = `ask_agent_${sanitise(agent.name)}`.slice(0, 56);
  const twins = all.filter((a) => `ask_agent_${sanitise(a.name)}`.slice(0, 56) === base);
  return twins.length > 1 ? `${base}_${agent.id.slice(0, 7)}` : base;
}

function agentOffers(deps: McpServerDeps): Offer[] {
  const agents = deps.registry().list();
  return agents.map((agent) => ({
    tool: {
      name: askToolName(agent, agents),
      description: `Send a message to the agent '${agent.name}' and get its reply.${agent.description ? ` ${agent.description}` : ''}`,
      inputSchema: askSchema,
    },
    async run(args, signal) {
      const message = typeof args.message === 'string' ? args.message : '';
      if (!message.trim()) throw new McpError(ErrorCode.InvalidParams, "missing required field 'message'");
      // The agent failing (its model, a budget) is a result of the tool, not a protocol error.
      return deps
        .runner()
        .run({ agentId: agent.id, message, origin: 'mcp', signal })
        .then((result) => text(result.response))
        .catch((err: Error) => text(`Agent '${agent.name}' failed: ${err.message}`, true));
    },
  }));
}

function toolOffer(deps: McpServerDeps, def: ToolDefinition, agentId: string | undefined): Offer {
  return {
    tool: { name: def.name, description: def.description, inputSchema: def.inputSchema as Tool['inputSchema'] },
    async run(args, signal) {
      const { output } = await deps.tools().invoke({ tool: def.name, input: args, agentId, signal, origin: 'mcp' });
      return text(output.content, output.isError === true);
    },
  };
}

/** What tools/list shows and tools/call may run, for this request. */
export function offers(deps: McpServerDeps, scope: AgentRecord | undefined): Offer[] {
  if (scope)
    return deps
      .tools()
      .allowed(scope)
      .map((def) => toolOffer(deps, def, scope.id));
  const gate = deps.gate();
  const permitted = gate
    ? deps
        .tools()
        .list()
        .filter((def) => gate.refusal(def.name) === undefined)
    : [];
  return [...agentOffers(deps), ...permitted.map((def) => toolOffer(deps, def, undefined))];
}

/** The one offer tools/call names, found without building the whole list (the gate check costs per tool). */
export function findOffer(deps: McpServerDeps, scope: AgentRecord | undefined, name: string): Offer | undefined {
  const def = deps.tools().find(name);
  if (scope) return def && def.name === name && deps.tools().allowed(scope).includes(def) ? toolOffer(deps, def, scope.id) : undefined;
  if (name.startsWith('ask_agent_')) return agentOffers(deps).find((o) => o.tool.name === name);
  const gate = deps.gate();
  return def && def.name === name && gate && gate.refusal(def.name) === undefined ? toolOffer(deps, def, undefined) : undefined;
}

/** A refusal of the agents module (unknown tool, not granted, bad input) is an invalid-params error for the client. */
function asMcpError(err: unknown): never {
  if (err instanceof McpError) throw err;
  if (err instanceof HttpError && err.statusCode < 500) throw new McpError(ErrorCode.InvalidParams, err.message);
  throw err;
}

/**
 * A fresh SDK server for one request (stateless: no session state is shared between requests). The JSON Schema
 * validator is shared: left to itself the SDK builds an Ajv instance per Server, which cost more than the rest of a
 * tools/call together (about 1.5 ms).
 */
function buildServer(deps: McpServerDeps, scope: AgentRecord | undefined, validator: AjvJsonSchemaValidator): Server {
  const server = new Server({ name: 'talon', version: deps.version }, { capabilities: { tools: {} }, jsonSchemaValidator: validator });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: offers(deps, scope).map((o) => o.tool) }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args = {} } = request.params;
    const offer = findOffer(deps, scope, name);
    if (!offer) throw new McpError(ErrorCode.InvalidParams, `Tool '${name}' is not offered${scope ? ` to agent '${scope.name}'` : ''}`);
    return offer.run(args, extra.signal).catch(asMcpError);
  });
  return server;
}

const validator = lazy(() => new AjvJsonSchemaValidator());

/** Answers one JSON-RPC request (or batch) over the stateless Streamable HTTP transport, with JSON. */
export async function answer(
  deps: McpServerDeps,
  scope: AgentRecord | undefined,
  request: Request,
  parsedBody: unknown,
): Promise<{ status: number; headers: Headers; text: string }> {
  const server = buildServer(deps, scope, validator());
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    const res = await transport.handleRequest(request, { parsedBody });
    return { status: res.status, headers: res.headers, text: await res.text() };
  } finally {
    await server.close();
  }
}
