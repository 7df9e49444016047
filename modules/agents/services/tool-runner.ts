/**
 * The one place a tool runs: the agent loop calls run() for each tool call of
 * a turn, POST /api/tools/{name}/invoke (tools module) calls invoke(). Both
 * check the input against the tool's schema, fire beforeToolCall and
 * afterToolCall around it and turn a throw into an error result.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { badRequest, forbidden, notFound, type EventChannel } from '@talon/module-sdk';
import type {
  agentEvents,
  AgentRecord,
  AgentTools,
  HeldToolCall,
  ToolCallInfo,
  ToolDefinition,
  ToolInvocation,
  ToolInvocationResult,
  ToolOutput,
} from '@talon/agents';
import type { AgentHooks } from './hooks.ts';
import type { AgentStore } from './registry.ts';
import { InputValidator } from './input-validation.ts';
import { OPERATOR_ID, operatorRecord } from './operator.ts';
import { dedupe, findTool, grants, grantsAgent } from './tools.ts';

/** One tool call of an agent, with the turn it belongs to. */
export interface ToolCall {
  agent: AgentRecord;
  tool: ToolDefinition;
  input: Record<string, unknown>;
  sessionId: string;
  turnId: string;
  callId: string;
  signal: AbortSignal;
  origin: string;
  notifyOwner(text: string): void;
}

/** A turn's tool call ended: its output, and the human decision it waits for when it was held. */
export type RunOutput = ToolOutput & { held?: HeldToolCall };

export interface ToolRunnerDeps {
  registry: AgentStore;
  hooks: () => AgentHooks;
  events: EventChannel<typeof agentEvents>;
  /** The folder tools run in when a direct invocation names no agent (created on first use). */
  invocationWorkspace: () => string;
  log: Logger;
}

export class ToolRunner implements AgentTools {
  private readonly validator = new InputValidator();

  constructor(private readonly deps: ToolRunnerDeps) {}

  list(): ToolDefinition[] {
    return dedupe(this.deps.hooks().tools.call([]));
  }

  find(name: string): ToolDefinition | undefined {
    return findTool(this.list(), name);
  }

  grants(agentTools: readonly string[], tool: Pick<ToolDefinition, 'name' | 'aliases'>): boolean {
    return grants(agentTools, tool);
  }

  /** The tools the agent is granted: what a turn offers the model. */
  allowed(agent: AgentRecord): ToolDefinition[] {
    return this.list().filter((t) => grantsAgent(agent, t));
  }

  /** A turn's tool call: input that does not match the schema is an error result the model can correct. */
  async run(call: ToolCall): Promise<RunOutput> {
    const problem = this.validator.problem(call.tool.name, call.tool.inputSchema, call.input);
    return problem ? { content: problem, isError: true } : this.execute(call);
  }

  async invoke(request: ToolInvocation): Promise<ToolInvocationResult> {
    const tool = this.find(request.tool);
    if (!tool) throw notFound(`Tool '${request.tool}' not found`);
    const agent = this.invoker(request.agentId, tool);
    const problem = this.validator.problem(tool.name, tool.inputSchema, request.input);
    if (problem) throw badRequest(problem);
    const ownerNotices: string[] = [];
    const call: ToolCall = {
      agent,
      tool,
      input: request.input,
      sessionId: agent.sessionId,
      turnId: randomUUID(),
      callId: randomUUID(),
      signal: request.signal,
      origin: request.origin,
      notifyOwner: (text) => ownerNotices.push(text),
    };
    // Without an agent nothing is observed: there is no workspace to snapshot and no agent to account to.
    const { held: _held, ...output } = await this.execute(call, request.agentId !== undefined, true);
    return { tool: tool.name, output, ownerNotices };
  }

  /** The agent a direct invocation runs as; the operator stand-in only for tools that need no agent. */
  private invoker(agentId: string | undefined, tool: ToolDefinition): AgentRecord {
    if (agentId === undefined) {
      if (tool.requiresAgent) throw badRequest(`tool '${tool.name}' acts for an agent: pass ?agent_id=<agent uuid>`);
      return operatorRecord(this.deps.invocationWorkspace());
    }
    const agent = this.deps.registry.get(agentId);
    if (!agent) throw notFound(`Agent '${agentId}' not found`);
    if (!grantsAgent(agent, tool)) throw forbidden(`Agent '${agent.name}' is not granted tool '${tool.name}'`);
    return agent;
  }

  private async execute(call: ToolCall, observed = true, direct = false): Promise<RunOutput> {
    const { agent, tool } = call;
    const info: ToolCallInfo = {
      agent,
      sessionId: call.sessionId,
      turnId: call.turnId,
      callId: call.callId,
      tool: tool.name,
      input: call.input,
      workspace: agent.workspace,
    };
    const hooks = this.deps.hooks();
    const log = this.deps.log.child({ agent_id: agent.id, tool: tool.name, origin: call.origin });
    // The kernel logs and skips a failing tap, so these hooks never reject.
    const refusal = observed ? await hooks.authorizeToolCall.promise(info) : undefined;
    if (refusal) return { content: `Tool '${tool.name}' was not run: ${refusal.deny}`, isError: true, ...(refusal.held && { held: refusal.held }) };
    if (observed) await hooks.beforeToolCall.promise(info);
    const started = Date.now();
    let output: ToolOutput;
    try {
      output = await tool.execute(call.input, {
        agent,
        sessionId: call.sessionId,
        turnId: call.turnId,
        callId: call.callId,
        workspace: agent.workspace,
        signal: call.signal,
        log,
        notifyOwner: call.notifyOwner,
      });
    } catch (err) {
      log.warn({ err }, 'tool threw instead of returning an error result');
      output = { content: `Tool '${tool.name}' failed: ${(err as Error).message}`, isError: true };
    }
    const ms = Date.now() - started;
    if (observed) output = await hooks.toolResult.promise(output, info);
    if (observed) await hooks.afterToolCall.promise({ ...info, output, ms });
    const real = agent.id !== OPERATOR_ID;
    this.deps.events.publish('tool.invoked', {
      agentId: real ? agent.id : undefined,
      sessionId: call.sessionId,
      turnId: call.turnId,
      tool: tool.name,
      isError: Boolean(output.isError),
      ms,
      ...(direct ? { direct } : {}),
    });
    return output;
  }
}
