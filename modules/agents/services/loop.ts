/**
 * One turn of the agent loop: system prompt + repaired history + tool
 * schemas → model → tool calls in order → results back → repeat until a
 * final answer, the iteration cap, an interrupt (checked at every tool-call
 * boundary) or a stop (aborts the provider request).
 */
import type { Logger } from 'pino';
import { HttpError, type EventChannel } from '@talon/module-sdk';
import {
  HELD_RESULT_PREFIX,
  type agentEvents,
  type AgentRecord,
  type HeldCallOutcome,
  type StoredFile,
  type ToolDefinition,
  type TurnEvent,
  type TurnInfo,
  type TurnRequest,
  type TurnResult,
} from '@talon/agents';
import type { CatalogService } from '@talon/catalog';
import type { CompletionResult, ContentBlock, LlmService } from '@talon/llm';
import type { AgentsConfig } from '../config.ts';
import type { AgentHooks } from './hooks.ts';
import { extraNumber } from './manifest.ts';
import type { AgentStore } from './registry.ts';
import type { SessionService } from './sessions.ts';
import type { UploadStore } from './uploads.ts';
import type { TraceStore, TurnStep } from './traces.ts';
import type { RunOutput, ToolRunner } from './tool-runner.ts';
import { LoopGuard } from './loop-guard.ts';
import { NOT_RUN_RESULT, textOf, toChat } from './history.ts';
import { attachmentBlocks } from './attachments.ts';
import { costOf, llmFailure, modelRef, streamModel } from './model.ts';
import { findTool } from './tools.ts';
import { isLocalUser } from './origins.ts';

export interface LoopDeps {
  registry: AgentStore;
  sessions: SessionService;
  uploads: UploadStore;
  traces: TraceStore;
  tools: ToolRunner;
  llm: LlmService;
  catalog: () => CatalogService | undefined;
  hooks: () => AgentHooks;
  events: EventChannel<typeof agentEvents>;
  config: () => AgentsConfig;
  log: Logger;
}

export interface TurnState {
  id: string;
  sessionId: string;
  controller: AbortController;
  /** Set by an interrupt; checked at every tool-call boundary. */
  interrupted: boolean;
}

type ToolUse = Extract<ContentBlock, { type: 'tool_use' }>;
type Outcome = { kind: 'ok'; text: string } | { kind: 'stopped' | 'interrupted' };

/** A turn request once the runner placed it: its session, and its origin ('module' when the caller named none). */
export type StartedTurn = TurnRequest & { sessionId: string; origin: string };

export function runLoop(deps: LoopDeps, request: StartedTurn, turn: TurnState, emit: (event: TurnEvent) => void): Promise<TurnResult> {
  return new Turn(deps, request, turn, emit).run();
}

/** The state of one running turn: what it counted, traced and said so far. */
class Turn {
  private readonly started = Date.now();
  private readonly stats = { iterations: 0, input: 0, output: 0, cost: 0 };
  private readonly steps: TurnStep[] = [];
  private readonly notices: string[] = [];
  private readonly texts: string[] = [];
  /** Files the turn's tools made: they go with the reply (TurnResult.files) and on its last assistant message. */
  private readonly files: StoredFile[] = [];
  private readonly hooks: AgentHooks;
  private readonly config: AgentsConfig;
  private readonly signal: AbortSignal;
  private readonly info: TurnInfo;
  private agent: AgentRecord;

  constructor(
    private readonly deps: LoopDeps,
    private readonly request: StartedTurn,
    private readonly turn: TurnState,
    private readonly emit: (event: TurnEvent) => void,
  ) {
    this.hooks = deps.hooks();
    this.config = deps.config();
    this.signal = turn.controller.signal;
    this.agent = deps.registry.require(request.agentId);
    const fromLocalUser = isLocalUser(request.origin);
    this.info = { agent: this.agent, sessionId: request.sessionId, turnId: turn.id, message: request.message, origin: request.origin, fromLocalUser };
  }

  async run(): Promise<TurnResult> {
    try {
      await this.open();
      const extra = this.agent.manifest.extra;
      const maxIterations = extraNumber(extra, 'autonomous', 'max_iterations') ?? this.config.max_iterations;
      const maxHistory = extraNumber(extra, undefined, 'max_history_messages') ?? this.config.max_history_messages;
      const guard = new LoopGuard(this.config.loop_guard);
      for (;;) {
        if (this.signal.aborted) return this.done(this.stoppedReply());
        if (this.stats.iterations >= maxIterations)
          throw new HttpError(500, `agent loop failure: reached the iteration cap (${maxIterations}) without a final answer`);
        const outcome = await this.iterate(guard, maxHistory);
        if (outcome) return this.done(outcome);
      }
    } catch (err) {
      const failure = llmFailure(err);
      this.finish('error', this.texts.join('\n\n'), failure.message);
      this.emit({ type: 'error', message: failure.message, status: failure.statusCode });
      // A refusal (4xx) is the client's; anything else means the agent could not do its work.
      if (failure.statusCode >= 500) this.deps.events.publish('agent.crashed', { agentId: this.agent.id, name: this.agent.name, error: failure.message });
      throw failure;
    }
  }

  /** Turn hooks, then the user message (with its attachments) joins the session and the turn is announced. */
  private async open(): Promise<void> {
    const { request, deps } = this;
    this.hooks.messageReceived.call(this.info);
    deps.events.publish('message.received', {
      agentId: this.agent.id,
      sessionId: request.sessionId,
      turnId: this.turn.id,
      message: request.message,
      origin: request.origin,
    });
    const refusal = await this.hooks.beforeTurn.promise(this.info);
    if (refusal) throw new HttpError(refusal.status, refusal.error);
    const fileIds = (request.attachments ?? []).map((a) => a.file_id);
    const attached: ContentBlock[] = [
      ...(fileIds.length ? await attachmentBlocks(this.agent.id, fileIds, deps.uploads, deps.log) : []),
      ...(request.images ?? []).map((img) => ({ type: 'image' as const, mediaType: img.mediaType, data: img.data })),
    ];
    // The blocks are stored as built, the message text apart from the files' text: history repair merges adjacent
    // text blocks before every model call (message rule 4), and `content` stays the user's own words.
    const blocks = attached.length ? [...(request.message ? [{ type: 'text' as const, text: request.message }] : []), ...attached] : undefined;
    if (request.resumes) this.appendOutcome(request.resumes);
    else if (!request.messageInSession) deps.sessions.append(request.sessionId, { role: 'User', content: request.message, blocks });
    // Refusals and bad attachments come before this point, so a stream can still answer them with a plain HTTP error.
    this.emit({ type: 'started', turnId: this.turn.id, agentId: this.agent.id, sessionId: request.sessionId });
    if (request.resumes) this.emit({ type: 'approval_result', outcome: request.resumes });
  }

  /**
   * A held call's outcome joins the session as that call made again with the outcome as its result: the model
   * reads it as a tool's answer, and no client shows it as something the user said.
   */
  private appendOutcome(outcome: HeldCallOutcome): void {
    const id = HELD_RESULT_PREFIX + outcome.callId;
    const { sessionId } = this.request;
    this.deps.sessions.append(sessionId, { role: 'Assistant', content: '', blocks: [{ type: 'tool_use', id, name: outcome.tool, input: outcome.input }] });
    this.deps.sessions.append(sessionId, {
      role: 'User',
      content: '',
      blocks: [{ type: 'tool_result', toolUseId: id, content: outcome.content, isError: outcome.isError }],
    });
  }

  /** One model call and the tool calls it asked for; an outcome ends the turn. */
  private async iterate(guard: LoopGuard, maxHistory: number): Promise<Outcome | undefined> {
    this.stats.iterations++;
    this.agent = this.deps.registry.get(this.agent.id) ?? this.agent;
    const tools = this.deps.tools.allowed(this.agent);
    const step: TurnStep = { iteration: this.stats.iterations, llm_ms: 0, input_tokens: 0, output_tokens: 0, tools: [] };
    this.steps.push(step);
    const result = await this.callModel(tools, maxHistory, step);
    if (!result || this.signal.aborted) return this.stoppedReply(result);
    const text = textOf(result.content);
    const uses = result.content.filter((b): b is ToolUse => b.type === 'tool_use');
    if (text) this.texts.push(text);
    if (result.content.length) {
      const last = !uses.length;
      this.deps.sessions.append(this.request.sessionId, {
        role: 'Assistant',
        content: text,
        blocks: uses.length ? result.content : undefined,
        files: last ? this.files : undefined,
      });
    }
    if (!uses.length) return { kind: 'ok', text };
    await this.runTools(uses, tools, guard, step);
    if (this.signal.aborted) return this.stoppedReply();
    if (this.turn.interrupted) return { kind: 'interrupted' };
    return undefined;
  }

  /**
   * A stop ends the turn with a reply marked stopped in the session: the text the model had streamed (its tool calls
   * are not run), or none. It survives a reload, and the next message stays a turn of its own for the model.
   */
  private stoppedReply(result?: CompletionResult): Outcome {
    const text = result ? textOf(result.content) : '';
    if (text) this.texts.push(text);
    this.deps.sessions.append(this.request.sessionId, { role: 'Assistant', content: text, stopped: true, files: this.files });
    return { kind: 'stopped' };
  }

  /** The streamed model call, counted into the turn (a stopped one with its partial content); undefined when a stop came before any content. */
  private async callModel(tools: ToolDefinition[], maxHistory: number, step: TurnStep): Promise<CompletionResult | undefined> {
    const { deps, request, agent } = this;
    const history = await deps.sessions.history(request.sessionId);
    const messages = toChat(history.messages, history.summary, maxHistory);
    const call = await this.hooks.beforeModelCall.promise({
      agent,
      sessionId: request.sessionId,
      userMessage: request.message,
      system: agent.systemPrompt,
      turnId: this.turn.id,
      origin: request.origin,
      fromLocalUser: this.info.fromLocalUser,
    });
    const started = Date.now();
    let result: CompletionResult;
    try {
      const schemas = tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }));
      result = await streamModel(
        deps.llm,
        modelRef(agent),
        {
          system: call.system,
          messages,
          tools: schemas,
          maxTokens: request.maxTokens ?? agent.manifest.model.max_tokens,
          temperature: request.temperature ?? agent.manifest.model.temperature,
          signal: this.signal,
          meta: { agentId: agent.id, sessionId: request.sessionId, purpose: 'turn' },
        },
        this.emit,
      );
    } catch (err) {
      if (this.signal.aborted) return undefined;
      throw llmFailure(err);
    }
    step.llm_ms = Date.now() - started;
    step.input_tokens = result.usage.inputTokens;
    step.output_tokens = result.usage.outputTokens;
    this.stats.input += result.usage.inputTokens;
    this.stats.output += result.usage.outputTokens;
    this.stats.cost += costOf(deps.llm, deps.catalog(), modelRef(agent), result);
    this.emit({ type: 'llm_done', usage: result.usage });
    return result;
  }

  /** A file a tool gives again (video_status on each call once the video is done) goes with the reply once. */
  private addFiles(files: readonly StoredFile[]): void {
    for (const file of files) if (!this.files.some((f) => f.file_id === file.file_id)) this.files.push(file);
  }

  /** The calls in order, until an interrupt or a stop; every call gets a result in the session, run or not. */
  private async runTools(uses: ToolUse[], tools: ToolDefinition[], guard: LoopGuard, step: TurnStep): Promise<void> {
    const results: ContentBlock[] = [];
    try {
      for (const use of uses) {
        if (this.turn.interrupted || this.signal.aborted) break;
        const output = await this.toolCall(use, tools, guard, step);
        if (output.files?.length) this.addFiles(output.files);
        results.push({ type: 'tool_result', toolUseId: use.id, content: output.content, isError: output.isError });
        const held = output.held;
        if (held) this.emit({ type: 'approval_pending', id: use.id, tool: use.name, input: use.input, approvalId: held.approvalId, expiresAt: held.expiresAt });
        this.emit({ type: 'tool_result', id: use.id, tool: use.name, input: use.input, content: output.content, isError: Boolean(output.isError) });
      }
    } finally {
      const answered = new Set(results.map((r) => (r.type === 'tool_result' ? r.toolUseId : '')));
      const notRun: ContentBlock[] = uses
        .filter((u) => !answered.has(u.id))
        .map((u) => ({ type: 'tool_result', toolUseId: u.id, content: NOT_RUN_RESULT, isError: true }));
      this.deps.sessions.append(this.request.sessionId, { role: 'User', content: '', blocks: [...results, ...notRun] });
    }
  }

  /** One call: the loop guard's verdict, then the tool (when the agent has it) through the tool runner. */
  private async toolCall(use: ToolUse, tools: ToolDefinition[], guard: LoopGuard, step: TurnStep): Promise<RunOutput> {
    const verdict = guard.check(use.name, use.input);
    if (verdict.kind === 'stop') throw new HttpError(500, `agent loop failure: ${verdict.message}`);
    if (verdict.kind === 'block') {
      step.tools.push({ tool: use.name, ms: 0, is_error: true, verdict: 'blocked' });
      return { content: verdict.message, isError: true };
    }
    const tool = findTool(tools, use.name);
    if (!tool) {
      step.tools.push({ tool: use.name, ms: 0, is_error: true, verdict: 'unknown' });
      return { content: `unknown tool '${use.name}' (not available to this agent)`, isError: true };
    }
    const started = Date.now();
    let output = await this.deps.tools.run({
      agent: this.agent,
      tool,
      input: use.input,
      sessionId: this.request.sessionId,
      turnId: this.turn.id,
      callId: use.id,
      signal: this.signal,
      origin: this.request.origin,
      notifyOwner: (text) => this.notices.push(text),
    });
    if (verdict.kind === 'warn') output = { ...output, content: `${output.content}\n\n[LOOP GUARD] ${verdict.message}` };
    step.tools.push({
      tool: tool.name,
      ms: Date.now() - started,
      is_error: Boolean(output.isError),
      verdict: output.held ? 'held' : verdict.kind === 'warn' ? 'warned' : 'ran',
    });
    return output;
  }

  /** Records the trace and builds the result. */
  private finish(outcome: string, response: string, error?: string): TurnResult {
    const { deps, request, turn, agent, stats } = this;
    const ms = Date.now() - this.started;
    deps.traces.record({
      turn_id: turn.id,
      agent_id: agent.id,
      session_id: request.sessionId,
      origin: request.origin,
      started_at: new Date(this.started).toISOString(),
      duration_ms: ms,
      iterations: stats.iterations,
      input_tokens: stats.input,
      output_tokens: stats.output,
      cost_usd: stats.cost,
      outcome,
      error: error ?? null,
      steps: this.steps,
    });
    deps.log.info({ agent_id: agent.id, session_id: request.sessionId, turn_id: turn.id, outcome, iterations: stats.iterations, ms, error }, 'turn finished');
    const result: TurnResult = {
      turnId: turn.id,
      agentId: agent.id,
      sessionId: request.sessionId,
      response,
      inputTokens: stats.input,
      outputTokens: stats.output,
      iterations: stats.iterations,
      costUsd: stats.cost,
      interrupted: outcome === 'interrupted' || outcome === 'stopped',
    };
    if (this.notices.length) result.ownerNotice = this.notices.join('\n\n');
    if (this.files.length) result.files = [...this.files];
    return result;
  }

  /** A turn that ended without an error: result, last events, and afterTurn off the request path. */
  private done(outcome: Outcome): TurnResult {
    const response = outcome.kind === 'ok' ? outcome.text : this.texts.join('\n\n');
    const result = this.finish(outcome.kind, response);
    if (result.ownerNotice) this.emit({ type: 'owner_notice', text: result.ownerNotice });
    this.emit({ type: 'done', result });
    const record = { ...this.info, agent: this.agent, result, exchange: { user: this.request.message, assistant: response } };
    this.deps.events.publish('turn.completed', {
      agentId: this.agent.id,
      sessionId: this.request.sessionId,
      turnId: this.turn.id,
      response,
      inputTokens: result.inputTokens,
      outputTokens: result.outputTokens,
      costUsd: result.costUsd,
      origin: this.request.origin,
    });
    setImmediate(() => {
      this.hooks.afterTurn.promise(record).catch((err: unknown) => this.deps.log.error({ err, turn_id: this.turn.id }, 'afterTurn hook failed'));
    });
    return result;
  }
}
