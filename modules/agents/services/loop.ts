/**
 * One turn of the agent loop: system prompt + repaired history + tool
 * schemas → model → tool calls in order → results back → repeat until a
 * final answer, the iteration cap, an interrupt (checked at every tool-call
 * boundary) or a stop (aborts the provider request).
 */
import type { Logger } from 'pino';
import { HttpError } from '@talon/module-sdk';
import type { AgentRecord, ModelCallContext, ToolCallInfo, ToolDefinition, ToolOutput, TurnEvent, TurnRequest, TurnResult, agentHooks } from '../api.ts';
import type { CompletionRequest, CompletionResult, ContentBlock, LlmService, ModelRef } from '../../llm/api.ts';
import type { CatalogService } from '../../catalog/api.ts';
import type { HookRef } from '@talon/module-sdk';
import { extraNumber } from './manifest.ts';
import type { AgentStore } from './registry.ts';
import type { SessionService } from './sessions.ts';
import type { UploadStore } from './uploads.ts';
import type { TraceStore, TurnStep } from './traces.ts';
import { LoopGuard, type LoopGuardConfig } from './loop-guard.ts';
import { NOT_RUN_RESULT, textOf, toChat } from './history.ts';
import { attachmentBlocks } from './attachments.ts';
import { allowedTools, findTool } from './tools.ts';

export type AgentHooks = typeof agentHooks extends HookRef<infer T> ? T : never;

export interface AgentsConfig {
  max_iterations: number;
  max_history_messages: number;
  upload_max_bytes: number;
  compaction: { keep_recent: number };
  loop_guard: LoopGuardConfig;
}

export interface LoopDeps {
  registry: AgentStore;
  sessions: SessionService;
  uploads: UploadStore;
  traces: TraceStore;
  llm: LlmService;
  catalog: () => CatalogService | undefined;
  hooks: () => AgentHooks;
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

/** The model reference a call for this agent goes to (manifest overrides included). */
export function modelRef(agent: AgentRecord): ModelRef {
  const ref: ModelRef = { provider: agent.model.provider, model: agent.model.model };
  if (agent.manifest.model.base_url) ref.baseUrl = agent.manifest.model.base_url;
  if (agent.manifest.model.api_key_env) ref.apiKeyEnv = agent.manifest.model.api_key_env;
  return ref;
}

/** LLM module errors → client statuses. Checked by name: each module bundles its own copy of the classes. */
export function llmFailure(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  const e = err as { name?: string; message?: string; status?: number };
  if (e?.name === 'LlmRefusedError' && typeof e.status === 'number') return new HttpError(e.status, e.message ?? 'LLM call refused');
  if (e?.name === 'LlmError') return new HttpError(502, `LLM provider error: ${e.message}`);
  return new HttpError(500, `agent loop failure: ${e?.message ?? String(err)}`);
}

export async function runLoop(
  deps: LoopDeps,
  request: TurnRequest & { sessionId: string },
  turn: TurnState,
  emit: (event: TurnEvent) => void,
): Promise<TurnResult> {
  const started = Date.now();
  const startedAt = new Date(started).toISOString();
  const hooks = deps.hooks();
  const config = deps.config();
  const signal = turn.controller.signal;
  let agent = deps.registry.require(request.agentId);
  const sessionId = request.sessionId;
  const info = { agent, sessionId, turnId: turn.id, message: request.message };
  const stats = { iterations: 0, input: 0, output: 0, cost: 0 };
  const steps: TurnStep[] = [];
  const notices: string[] = [];
  const texts: string[] = [];

  const finish = (outcome: string, response: string, error?: string): TurnResult => {
    deps.traces.record({
      turn_id: turn.id,
      agent_id: agent.id,
      session_id: sessionId,
      origin: request.origin ?? 'http',
      started_at: startedAt,
      duration_ms: Date.now() - started,
      iterations: stats.iterations,
      input_tokens: stats.input,
      output_tokens: stats.output,
      cost_usd: stats.cost,
      outcome,
      error: error ?? null,
      steps,
    });
    deps.log.info(
      { agent_id: agent.id, session_id: sessionId, turn_id: turn.id, outcome, iterations: stats.iterations, ms: Date.now() - started, error },
      'turn finished',
    );
    const result: TurnResult = {
      turnId: turn.id,
      agentId: agent.id,
      sessionId,
      response,
      inputTokens: stats.input,
      outputTokens: stats.output,
      iterations: stats.iterations,
      costUsd: stats.cost,
      interrupted: outcome === 'interrupted' || outcome === 'stopped',
    };
    if (notices.length) result.ownerNotice = notices.join('\n\n');
    return result;
  };

  try {
    hooks.messageReceived.call(info);
    const refusal = await hooks.beforeTurn.promise(info);
    if (refusal) throw new HttpError(refusal.status, refusal.error);

    const attached: ContentBlock[] = [
      ...(request.attachments?.length
        ? await attachmentBlocks(
            agent.id,
            request.attachments.map((a) => a.file_id),
            deps.uploads,
            deps.log,
          )
        : []),
      ...(request.images ?? []).map((img) => ({ type: 'image' as const, mediaType: img.mediaType, data: img.data })),
    ];
    // The blocks are stored as built, the message text apart from the files' text: history repair merges adjacent
    // text blocks before every model call (message rule 4), and `content` stays the user's own words.
    const blocks: ContentBlock[] | undefined = attached.length
      ? [...(request.message ? [{ type: 'text' as const, text: request.message }] : []), ...attached]
      : undefined;
    deps.sessions.append(sessionId, { role: 'User', content: request.message, blocks });
    // Refusals and bad attachments come before this point, so a stream can still answer them with a plain HTTP error.
    emit({ type: 'started', turnId: turn.id, agentId: agent.id, sessionId });

    const guard = new LoopGuard(config.loop_guard);
    const maxIterations = extraNumber(agent.manifest.extra, 'autonomous', 'max_iterations') ?? config.max_iterations;
    const maxHistory = extraNumber(agent.manifest.extra, undefined, 'max_history_messages') ?? config.max_history_messages;

    for (;;) {
      if (signal.aborted) return done('stopped');
      if (stats.iterations >= maxIterations)
        throw new HttpError(500, `agent loop failure: reached the iteration cap (${maxIterations}) without a final answer`);
      stats.iterations++;
      agent = deps.registry.get(agent.id) ?? agent;
      const tools = allowedTools(hooks.tools.call([]), agent);
      const row = deps.sessions.get(sessionId);
      const messages = toChat(deps.sessions.messages(sessionId), row?.summary, maxHistory);
      const call: ModelCallContext = await hooks.beforeModelCall.promise({ agent, sessionId, userMessage: request.message, system: agent.systemPrompt });
      const llmStarted = Date.now();
      const step: TurnStep = { iteration: stats.iterations, llm_ms: 0, input_tokens: 0, output_tokens: 0, tools: [] };
      steps.push(step);
      let result: CompletionResult;
      try {
        result = await streamModel(
          deps.llm,
          modelRef(agent),
          {
            system: call.system,
            messages,
            tools: tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
            maxTokens: request.maxTokens ?? agent.manifest.model.max_tokens,
            temperature: request.temperature ?? agent.manifest.model.temperature,
            signal,
            meta: { agentId: agent.id, sessionId, purpose: 'turn' },
          },
          emit,
        );
      } catch (err) {
        if (signal.aborted) return done('stopped');
        throw llmFailure(err);
      }
      step.llm_ms = Date.now() - llmStarted;
      step.input_tokens = result.usage.inputTokens;
      step.output_tokens = result.usage.outputTokens;
      stats.input += result.usage.inputTokens;
      stats.output += result.usage.outputTokens;
      stats.cost += costOf(deps, modelRef(agent), result);
      emit({ type: 'llm_done', usage: result.usage });

      const text = textOf(result.content);
      const uses = result.content.filter((b): b is Extract<ContentBlock, { type: 'tool_use' }> => b.type === 'tool_use');
      if (text) texts.push(text);
      if (result.content.length) deps.sessions.append(sessionId, { role: 'Assistant', content: text, blocks: uses.length ? result.content : undefined });
      if (!uses.length) return done('ok', text);

      const results: ContentBlock[] = [];
      try {
        for (const use of uses) {
          if (turn.interrupted || signal.aborted) break;
          const verdict = guard.check(use.name, use.input);
          if (verdict.kind === 'stop') throw new HttpError(500, `agent loop failure: ${verdict.message}`);
          let output: ToolOutput;
          const t0 = Date.now();
          const tool = findTool(tools, use.name);
          if (verdict.kind === 'block') {
            output = { content: verdict.message, isError: true };
            step.tools.push({ tool: use.name, ms: 0, is_error: true, verdict: 'blocked' });
          } else if (!tool) {
            output = { content: `Error: unknown tool '${use.name}' (not available to this agent)`, isError: true };
            step.tools.push({ tool: use.name, ms: 0, is_error: true, verdict: 'unknown' });
          } else {
            output = await runTool(deps, hooks, agent, turn, use, tool, notices);
            if (verdict.kind === 'warn') output = { ...output, content: `${output.content}\n\n[LOOP GUARD] ${verdict.message}` };
            step.tools.push({ tool: tool.name, ms: Date.now() - t0, is_error: Boolean(output.isError), verdict: verdict.kind === 'warn' ? 'warned' : 'ran' });
          }
          results.push({ type: 'tool_result', toolUseId: use.id, content: output.content, isError: output.isError });
          emit({ type: 'tool_result', id: use.id, tool: use.name, input: use.input, content: output.content, isError: Boolean(output.isError) });
        }
      } finally {
        const answered = new Set(results.map((r) => (r.type === 'tool_result' ? r.toolUseId : '')));
        const notRun: ContentBlock[] = uses
          .filter((u) => !answered.has(u.id))
          .map((u) => ({ type: 'tool_result', toolUseId: u.id, content: NOT_RUN_RESULT, isError: true }));
        deps.sessions.append(sessionId, { role: 'User', content: '', blocks: [...results, ...notRun] });
      }
      if (signal.aborted) return done('stopped');
      if (turn.interrupted) return done('interrupted');
    }
  } catch (err) {
    const failure = llmFailure(err);
    finish('error', texts.join('\n\n'), failure.message);
    emit({ type: 'error', message: failure.message, status: failure.statusCode });
    throw failure;
  }

  function done(outcome: string, finalText?: string): TurnResult {
    const response = outcome === 'ok' ? (finalText ?? '') : texts.join('\n\n');
    const result = finish(outcome, response);
    if (result.ownerNotice) emit({ type: 'owner_notice', text: result.ownerNotice });
    emit({ type: 'done', result });
    const record = { ...info, agent, result, exchange: { user: request.message, assistant: response } };
    setImmediate(() => {
      hooks.afterTurn.promise(record).catch((err: unknown) => deps.log.error({ err, turn_id: turn.id }, 'afterTurn hook failed'));
    });
    return result;
  }
}

async function runTool(
  deps: LoopDeps,
  hooks: AgentHooks,
  agent: AgentRecord,
  turn: TurnState,
  use: { id: string; name: string; input: Record<string, unknown> },
  tool: ToolDefinition,
  notices: string[],
): Promise<ToolOutput> {
  const call: ToolCallInfo = {
    agent,
    sessionId: turn.sessionId,
    turnId: turn.id,
    callId: use.id,
    tool: tool.name,
    input: use.input,
    workspace: agent.workspace,
  };
  // The kernel skips a failing tap (logged), so these hooks never reject.
  await hooks.beforeToolCall.promise(call);
  const started = Date.now();
  let output: ToolOutput;
  try {
    output = await tool.execute(use.input, {
      agent,
      sessionId: turn.sessionId,
      turnId: turn.id,
      callId: use.id,
      workspace: agent.workspace,
      signal: turn.controller.signal,
      log: deps.log.child({ agent_id: agent.id, tool: tool.name }),
      notifyOwner: (text) => notices.push(text),
    });
  } catch (err) {
    output = { content: `Error: ${(err as Error).message}`, isError: true };
  }
  await hooks.afterToolCall.promise({ ...call, output, ms: Date.now() - started });
  return output;
}

/** USD cost of a call from catalogue prices (0 without a catalog or for an unpriced model). */
function costOf(deps: LoopDeps, ref: ModelRef, result: CompletionResult): number {
  const catalog = deps.catalog();
  if (!catalog) return 0;
  const { inputTokens, outputTokens } = result.usage;
  const direct = catalog.cost(result.provider, result.model, inputTokens, outputTokens);
  if (direct > 0) return direct;
  // Providers answer with dated model names the catalogue may not list: price the model that was asked for.
  const target = deps.llm.resolve(ref);
  return target.provider === result.provider ? catalog.cost(target.provider, target.model, inputTokens, outputTokens) : 0;
}

/** One streamed model call; text deltas and finished tool calls are reported as they come. */
async function streamModel(
  llm: LlmService,
  ref: ModelRef,
  request: Omit<CompletionRequest, 'model'>,
  emit: (event: TurnEvent) => void,
): Promise<CompletionResult> {
  for await (const event of llm.stream(ref, request)) {
    if (event.type === 'text_delta') emit({ type: 'text_delta', content: event.text });
    else if (event.type === 'tool_use_end') emit({ type: 'tool_use', id: event.id, tool: event.name, input: event.input });
    else if (event.type === 'done') return event.result;
  }
  throw new HttpError(502, 'LLM provider error: the stream ended without a final result');
}
