/**
 * One background turn, run by whichever process claimed its row: it resolves the session mode, bounds the turn's
 * time and turns a stop into an error, so every automation module runs turns the same way.
 */
import { conflict, HttpError, notFound } from '@talon/module-sdk';
import type { AgentRecord, AgentRegistry, AgentRunner, SessionStore, TurnResult } from '@talon/agents';
import type { BackgroundTurn, SessionMode } from '../api.ts';

/** Node timers overflow above this (about 24.8 days): a longer limit means no limit. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** What a queue row keeps of a turn (its payload): everything but the signal, which stays with the caller. */
export type TurnPayload = Pick<BackgroundTurn, 'agentId' | 'message' | 'origin' | 'sessionMode' | 'defaultMode' | 'timeoutMs'>;

export interface TurnDeps {
  registry: () => AgentRegistry;
  runner: () => AgentRunner;
  sessions: () => SessionStore;
}

export function payloadOf(turn: BackgroundTurn): TurnPayload {
  const { agentId, message, origin, sessionMode, defaultMode, timeoutMs } = turn;
  return { agentId, message, origin, sessionMode, defaultMode, timeoutMs };
}

/** Runs the turn; `signal` stops it (a cancel, from here or from another process). */
export async function runTurn(deps: TurnDeps, t: TurnPayload, signal: AbortSignal): Promise<TurnResult> {
  if (signal.aborted) throw conflict('stopped before the turn started');
  const agent = deps.registry().get(t.agentId);
  if (!agent) throw notFound(`agent '${t.agentId}' not found`);
  const mode = t.sessionMode ?? manifestMode(agent) ?? t.defaultMode ?? 'persistent';
  const sessionId = mode === 'new' ? await deps.sessions().create(agent.id) : undefined;
  const controller = new AbortController();
  const stop = () => controller.abort(new Error('stopped'));
  signal.addEventListener('abort', stop, { once: true });
  let timedOut = false;
  const limit = t.timeoutMs && t.timeoutMs <= MAX_TIMER_MS ? t.timeoutMs : 0;
  const timer = limit
    ? setTimeout(() => {
        timedOut = true;
        stop();
      }, limit)
    : undefined;
  const timeout = () => new HttpError(504, `the turn of agent '${agent.name}' timed out after ${limit / 1000}s`);
  try {
    const result = await deps.runner().run({ agentId: agent.id, sessionId, message: t.message, origin: t.origin, signal: controller.signal });
    if (timedOut) throw timeout();
    if (result.interrupted) throw conflict(`the turn of agent '${agent.name}' was stopped before it finished`);
    return result;
  } catch (err) {
    throw timedOut ? timeout() : err;
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', stop);
  }
}

function manifestMode(agent: AgentRecord): SessionMode | undefined {
  const mode = agent.manifest.extra.session_mode;
  return mode === 'new' || mode === 'persistent' ? mode : undefined;
}
