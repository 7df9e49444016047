/** The agent's side of a model call: which model, streaming, pricing, and LLM failures as client statuses. */
import { HttpError } from '@talon/module-sdk';
import type { AgentRecord, TurnEvent } from '@talon/agents';
import type { CatalogService } from '@talon/catalog';
import type { CompletionRequest, CompletionResult, LlmError, LlmRefusedError, LlmService, ModelRef } from '@talon/llm';

/** The model reference a call for this agent goes to (manifest overrides included). */
export function modelRef(agent: AgentRecord): ModelRef {
  const ref: ModelRef = { provider: agent.model.provider, model: agent.model.model };
  if (agent.manifest.model.base_url) ref.baseUrl = agent.manifest.model.base_url;
  if (agent.manifest.model.api_key_env) ref.apiKeyEnv = agent.manifest.model.api_key_env;
  return ref;
}

/** LLM module errors → client statuses. Told apart by name, as the llm contract asks (they come from its code). */
export function llmFailure(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  const name = (err as { name?: unknown } | undefined)?.name;
  if (name === 'LlmRefusedError') {
    const refused = err as LlmRefusedError;
    return new HttpError(refused.status, refused.message);
  }
  if (name === 'LlmError') return new HttpError(502, `LLM provider error: ${(err as LlmError).message}`);
  return new HttpError(500, `agent loop failure: ${err instanceof Error ? err.message : String(err)}`);
}

/** One streamed model call; text deltas and finished tool calls are reported as they come. */
export async function streamModel(
  llm: LlmService,
  ref: ModelRef,
  request: Omit<CompletionRequest, 'model'>,
  emit: (event: TurnEvent) => void,
): Promise<CompletionResult> {
  for await (const event of llm.stream(ref, request)) {
    if (event.type === 'text_delta') emit({ type: 'text_delta', content: event.text });
    else if (event.type === 'tool_use_end') emit({ type: 'tool_use', id: event.id, tool: event.name, input: event.input });
    // A stop after content went out ends the stream with what was said (stopReason 'stopped'), metered as such.
    else if (event.type === 'done' || event.type === 'stopped') return event.result;
  }
  throw new HttpError(502, 'LLM provider error: the stream ended without a final result');
}

/** USD cost of a call from catalogue prices (0 without a catalog or for an unpriced model). */
export function costOf(llm: LlmService, catalog: CatalogService | undefined, ref: ModelRef, result: CompletionResult): number {
  if (!catalog) return 0;
  const { inputTokens, outputTokens } = result.usage;
  const direct = catalog.cost(result.provider, result.model, inputTokens, outputTokens);
  if (direct > 0) return direct;
  // Providers answer with dated model names the catalogue may not list: price the model that was asked for.
  const target = llm.resolve(ref);
  return target.provider === result.provider ? catalog.cost(target.provider, target.model, inputTokens, outputTokens) : 0;
}
