/**
 * The agent runner: queues turns per session (different sessions run in
 * parallel; the turns of one session one after another, in arrival order,
 * whichever process they arrived on: see leases.ts), owns interrupt flags and
 * stop, and fans turn events out to the caller and to attach subscribers. The
 * loop itself is in loop.ts.
 */
import { randomUUID } from 'node:crypto';
import { badRequest, conflict } from '@talon/module-sdk';
import type { AgentRunner, TurnEvent, TurnRequest, TurnResult } from '@talon/agents';
import { runLoop, type LoopDeps, type TurnState } from './loop.ts';
import { UNNAMED_ORIGIN } from './origins.ts';
import { titleByModel } from './titles.ts';
import type { LeaseTurn, SessionLeases } from './leases.ts';

export type TurnListener = Parameters<AgentRunner['subscribe']>[1];

interface Turn extends TurnState {
  agentId: string;
  parentTurnId?: string;
  /** False while the turn waits behind another turn of its session. */
  active: boolean;
}

export interface RunnerDeps {
  leases: SessionLeases;
  /** This process's node id: a session whose previous turn ran elsewhere is read again. */
  node: string;
  /** Aborted when the module copy stops: turns still waiting for their session give up. */
  signal: AbortSignal;
}

export class Runner implements AgentRunner {
  private readonly turns = new Map<string, Turn>();
  /** Interrupt flags set while no turn of the session ran (they apply to its next turn). */
  private readonly pendingInterrupts = new Set<string>();
  private readonly listeners = new Map<string, Set<TurnListener>>();
  /** Order of arrival within a millisecond. */
  private arrivals = 0;

  constructor(
    private readonly deps: LoopDeps,
    private readonly own: RunnerDeps,
  ) {}

  async run(request: TurnRequest, onEvent?: (event: TurnEvent) => void): Promise<TurnResult> {
    // The place in the session's queue is the moment of arrival, before anything is awaited.
    const arrivedAt = Date.now();
    const seq = ++this.arrivals;
    const agent = this.deps.registry.require(request.agentId);
    if (agent.state === 'Stopped') throw conflict(`agent '${agent.name}' is stopped; start it first (POST /api/agents/bulk/start)`);
    const sessionId = request.sessionId ?? agent.sessionId;
    if (request.sessionId !== undefined && !(await this.deps.sessions.exists(agent.id, request.sessionId))) {
      throw badRequest(`session '${request.sessionId}' does not belong to agent '${agent.id}'`);
    }
    if (!request.message.trim() && !request.attachments?.length && !request.images?.length && !request.resumes) throw badRequest('message must not be empty');

    const controller = new AbortController();
    const turn: Turn = { id: randomUUID(), agentId: agent.id, sessionId, controller, interrupted: false, parentTurnId: request.parentTurnId, active: false };
    const abort = () => controller.abort(new Error('stopped'));
    if (request.signal) {
      if (request.signal.aborted) abort();
      else request.signal.addEventListener('abort', abort, { once: true });
    }
    const parent = request.parentTurnId ? this.turns.get(request.parentTurnId) : undefined;
    if (parent) {
      if (parent.controller.signal.aborted) abort();
      else parent.controller.signal.addEventListener('abort', abort, { once: true });
    }
    this.turns.set(turn.id, turn);
    const origin = request.origin ?? UNNAMED_ORIGIN;
    const lease: LeaseTurn = { id: turn.id, sessionId, agentId: agent.id, origin, arrivedAt, seq };
    try {
      // A stopped turn still waits for its place (it then ends at once), as a stop does not reorder the queue.
      const { previousNode } = await this.own.leases.acquire(lease, this.own.signal);
      turn.active = true;
      // The previous turn ran in another process: what this one holds of the session may lack its messages.
      if (previousNode !== undefined && previousNode !== this.own.node) this.deps.sessions.forget(sessionId);
      // A new message clears the session's flag; a flag set while idle still applies to this turn.
      turn.interrupted = this.pendingInterrupts.delete(sessionId);
      const emit = (event: TurnEvent) => this.emit(turn, event, onEvent);
      const result = await runLoop(this.deps, { ...request, agentId: agent.id, sessionId, origin }, turn, emit);
      void titleByModel(this.deps, result);
      return result;
    } finally {
      this.turns.delete(turn.id);
      request.signal?.removeEventListener('abort', abort);
      parent?.controller.signal.removeEventListener('abort', abort);
      if (turn.active) this.own.leases.release(lease);
    }
  }

  stop(agentId: string): boolean {
    let any = false;
    for (const turn of this.turns.values()) {
      if (turn.agentId !== agentId) continue;
      any = true;
      // Subagent turns listen to their parent's signal, so this cascades down.
      turn.controller.abort(new Error('stopped'));
    }
    return any;
  }

  interrupt(agentId: string, sessionId: string): void {
    const running = [...this.turns.values()].find((t) => t.agentId === agentId && t.sessionId === sessionId && t.active);
    if (running) running.interrupted = true;
    else this.pendingInterrupts.add(sessionId);
  }

  /** Reset clears a session's pending interrupt. */
  clearInterrupt(sessionId: string): void {
    this.pendingInterrupts.delete(sessionId);
  }

  subscribe(agentId: string, listener: TurnListener): () => void {
    let set = this.listeners.get(agentId);
    if (!set) this.listeners.set(agentId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (!set.size && this.listeners.get(agentId) === set) this.listeners.delete(agentId);
    };
  }

  /** Resolves when no turn of this copy runs any more, or after `ms`. */
  async settled(ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    while (this.turns.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  }

  isRunning(agentId: string): boolean {
    return [...this.turns.values()].some((t) => t.agentId === agentId && t.active);
  }

  /** Running turns of an agent (attach follows one of them). */
  activeTurns(agentId: string): Array<{ turnId: string; sessionId: string }> {
    return [...this.turns.values()].filter((t) => t.agentId === agentId && t.active).map((t) => ({ turnId: t.id, sessionId: t.sessionId }));
  }

  listenerCount(agentId: string): number {
    return this.listeners.get(agentId)?.size ?? 0;
  }

  private emit(turn: Turn, event: TurnEvent, onEvent?: (event: TurnEvent) => void): void {
    try {
      onEvent?.(event);
    } catch (err) {
      this.deps.log.warn({ err }, 'turn event consumer failed');
    }
    for (const listener of this.listeners.get(turn.agentId) ?? []) {
      try {
        listener(event, { turnId: turn.id, sessionId: turn.sessionId });
      } catch (err) {
        this.deps.log.warn({ err }, 'turn event subscriber failed');
      }
    }
  }
}
