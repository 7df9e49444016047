/**
 * The queue: background agent turns (schedules, triggers, workflow steps, task wake-ups) run here, each in the
 * slot of its lane. It resolves the session mode, bounds the turn's time and turns a stop into an error, so every
 * automation module runs turns the same way.
 */
import { conflict, HttpError, notFound } from '@talon/module-sdk';
import type { AgentRecord, AgentRegistry, AgentRunner, SessionStore, TurnResult } from '@talon/agents';
import type { BackgroundTurn, LaneStatus, SessionMode, TaskQueue } from '../api.ts';
import type { TasksConfig } from '../config.ts';
import { Lane } from './lane.ts';

/** Node timers overflow above this (about 24.8 days): a longer limit means no limit. */
const MAX_TIMER_MS = 2 ** 31 - 1;
const MINUTE = 60_000;
const DEFAULT_CAP = 4;

export interface QueueDeps {
  registry: () => AgentRegistry;
  runner: () => AgentRunner;
  sessions: () => SessionStore;
  config: () => TasksConfig;
}

export class Queue implements TaskQueue {
  private readonly laneMap = new Map<string, Lane>();
  /** End times of the jobs of the last minute, oldest first (throughput). */
  private readonly finished: number[] = [];

  constructor(private readonly deps: QueueDeps) {}

  run<T>(lane: string, job: () => Promise<T>): Promise<T> {
    return this.lane(lane)
      .run(job)
      .finally(() => this.finished.push(Date.now()));
  }

  runTurn(turn: BackgroundTurn): Promise<TurnResult> {
    return this.run(turn.lane, () => this.turn(turn));
  }

  lanes(): LaneStatus[] {
    for (const name of Object.keys(this.deps.config().lanes)) this.lane(name);
    return [...this.laneMap.values()].map((l) => ({ lane: l.name, active: l.active, queued: l.queued, capacity: l.cap, completed: l.completed }));
  }

  /** Jobs finished in the last minute. */
  throughputPerMinute(): number {
    const since = Date.now() - MINUTE;
    while (this.finished.length && this.finished[0] < since) this.finished.shift();
    return this.finished.length;
  }

  private lane(name: string): Lane {
    let lane = this.laneMap.get(name);
    if (!lane) {
      const lanes = () => this.deps.config().lanes as Record<string, number | undefined>;
      lane = new Lane(name, () => lanes()[name] ?? DEFAULT_CAP);
      this.laneMap.set(name, lane);
    }
    return lane;
  }

  private async turn(t: BackgroundTurn): Promise<TurnResult> {
    if (t.signal?.aborted) throw conflict('stopped before the turn started');
    const agent = this.deps.registry().get(t.agentId);
    if (!agent) throw notFound(`agent '${t.agentId}' not found`);
    const mode = t.sessionMode ?? manifestMode(agent) ?? t.defaultMode ?? 'persistent';
    const sessionId = mode === 'new' ? this.deps.sessions().create(agent.id) : undefined;
    const controller = new AbortController();
    const stop = () => controller.abort(new Error('stopped'));
    t.signal?.addEventListener('abort', stop, { once: true });
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
      const result = await this.deps.runner().run({ agentId: agent.id, sessionId, message: t.message, origin: t.origin, signal: controller.signal });
      if (timedOut) throw timeout();
      if (result.interrupted) throw conflict(`the turn of agent '${agent.name}' was stopped before it finished`);
      return result;
    } catch (err) {
      throw timedOut ? timeout() : err;
    } finally {
      clearTimeout(timer);
      t.signal?.removeEventListener('abort', stop);
    }
  }
}

function manifestMode(agent: AgentRecord): SessionMode | undefined {
  const mode = agent.manifest.extra.session_mode;
  return mode === 'new' || mode === 'persistent' ? mode : undefined;
}
