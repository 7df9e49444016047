/**
 * Makes versions count: before each model call the agent's system prompt is replaced by the running
 * experiment's arm for this session, else by the active version. First in the waterfall, so what other taps
 * add (memory recall) is added to the version's prompt. Each turn an arm serves is measured at its end.
 */
import { STAGE, type TapFacade } from '@talon/module-sdk';
import type { agentHooks } from '@talon/agents';
import type { Experiments } from './experiments.ts';
import type { Versions } from './versions.ts';

interface Served {
  variantId: string;
  started: number;
  toolError: boolean;
}

/** Turns a crash left without an end are forgotten after this long. */
const STALE_MS = 30 * 60_000;

export function injectPrompts(
  hooks: TapFacade<ReturnType<(typeof agentHooks)['create']>>,
  deps: { enabled: () => boolean; versions: Versions; experiments: Experiments },
): () => void {
  const served = new Map<string, Served>();

  hooks.beforeModelCall.tap(
    'prompt-version',
    (call) => {
      if (!deps.enabled()) return call;
      const arm = deps.experiments.armFor(call.agent.id, call.sessionId);
      const prompt = arm?.prompt ?? deps.versions.activePrompt(call.agent.id);
      if (prompt === undefined) return call;
      if (arm && call.turnId && !served.has(call.turnId)) {
        served.set(call.turnId, { variantId: arm.variantId, started: Date.now(), toolError: false });
        deps.experiments.impression(arm.variantId);
      }
      // Other taps may have run before at the same stage: keep what follows the agent's own prompt.
      const rest = call.system.startsWith(call.agent.systemPrompt) ? call.system.slice(call.agent.systemPrompt.length) : '';
      return { ...call, system: prompt + rest };
    },
    { stage: STAGE.FIRST },
  );

  hooks.afterToolCall.tapPromise('prompt-experiment', async (call) => {
    const turn = served.get(call.turnId);
    if (turn && call.output.isError) turn.toolError = true;
  });

  hooks.afterTurn.tapPromise('prompt-experiment', async (record) => {
    const turn = served.get(record.turnId);
    if (!turn) return;
    served.delete(record.turnId);
    const r = record.result;
    const win = r.response.trim() !== '' && !r.interrupted && !turn.toolError;
    deps.experiments.outcome(turn.variantId, { win, costUsd: r.costUsd, latencyMs: Date.now() - turn.started });
  });

  return () => {
    const cutoff = Date.now() - STALE_MS;
    for (const [id, t] of served) if (t.started < cutoff) served.delete(id);
  };
}
