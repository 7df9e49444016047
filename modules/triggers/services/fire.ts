/**
 * What happens to each event: the engine picks the triggers it fires, each fire is recorded (count, cooldown stamp,
 * self-disable at max_fires) before its turn is queued, and a posted task whose assignee no trigger of its own
 * fired for wakes that assignee. Turns run in the queue ('trigger' and 'task' lanes); the handler never waits for
 * them, so a slow turn never holds up the next event.
 */
import { randomUUID } from 'node:crypto';
import { isUuid, type EventOf } from '@talon/module-sdk';
import type { KnownEvent } from './known.ts';
import type { Logger } from 'pino';
import type { AgentRecord, AgentRegistry, AgentTools } from '@talon/agents';
import type { TaskBoard, taskEvents, TaskQueue } from '@talon/tasks';
import type { WorkflowRunner } from '@talon/workflows';
import type { DeliveryRequest, DeliverySource } from '@talon/triggers';
import type { TriggersConfig } from '../config.ts';
import type { ChainTracker } from './chain.ts';
import type { DeliveryLog, TakenFire } from './deliveries.ts';
import { describeEvent } from './describe.ts';
import type { Engine, Match } from './engine.ts';
import type { Trigger, TriggerStore } from './store.ts';

export interface FireDeps {
  engine: Engine;
  store: TriggerStore;
  chain: ChainTracker;
  queue: () => TaskQueue;
  board: () => TaskBoard | undefined;
  agents: () => AgentRegistry;
  tools: () => AgentTools | undefined;
  workflows: () => WorkflowRunner | undefined;
  deliveries: Pick<DeliveryLog, 'deliver' | 'deliverFire'>;
  config: () => TriggersConfig;
  log: Logger;
  /** This process's node id: a fire records it with its pending turn (another process resumes it if this one dies). */
  node: string;
}

export class Firing {
  constructor(private readonly deps: FireDeps) {}

  /** The bus subscriber: evaluates one event and starts what it fires (recorded in order; the turns are not awaited). */
  async handle(event: KnownEvent): Promise<void> {
    const { engine, chain, config, log } = this.deps;
    const depth = chain.depthOf(event);
    const matches = engine.match(event);
    if (depth >= config().max_chain_depth) {
      if (matches.length) log.warn({ event: event.type, depth, triggers: matches.map((m) => m.trigger.id) }, 'trigger chain stopped at max_chain_depth');
      return;
    }
    const fired: Match[] = [];
    for (const match of matches) if (await this.fire(match, event, depth + 1)) fired.push(match);
    if (event.type === 'task.posted') await this.wake(event, fired, depth + 1);
  }

  /**
   * Records the fire (the store decides: cooldown and max_fires hold across processes) and queues its turn. The queue
   * commits its row on its own (its contract: the caller waits for the result, so not inside a transaction), so the
   * fire's commit also writes a pending-fire row, removed with the delivery row: if this process dies in between,
   * another one (or the next start) resumes the turn (see resume).
   */
  private async fire(match: Match, event: KnownEvent, depth: number): Promise<boolean> {
    const t = match.trigger;
    const agentId = t.target_agent_id ?? t.agent_id;
    // The recipient may just have been killed (its own agent.terminated event): nothing to run.
    if (!this.deps.agents().get(agentId)) return false;
    const now = Date.now();
    const cooldownMs = (t.cooldown_secs ?? this.deps.config().cooldown_secs) * 1000;
    const cause = describeEvent(event);
    const fireId = randomUUID();
    const prompt = promptOf(t, cause);
    try {
      const pending = { id: fireId, agentId, node: this.deps.node, cause, prompt, depth };
      const updated = await this.deps.store.recordFire(t.id, match.subject, now, cooldownMs, pending);
      // Another process fired it for this subject within the cooldown, or it reached max_fires, or it went.
      if (!updated) return false;
      this.deps.engine.fired(match, now, updated);
    } catch (err) {
      this.deps.log.error({ err, trigger: match.trigger.id }, 'could not record a trigger fire; not firing it');
      return false;
    }
    const fire = { id: fireId, node: this.deps.node };
    void this.run(agentId, depth, 'trigger', t.id, cause, () => this.turnOrWorkflow(t, agentId, prompt, fireId), fire);
    return true;
  }

  /**
   * A pending fire of a process that died before its turn reported: its turn runs here, keyed by the fire's id, so it
   * joins the turn (or workflow run) that process had queued — run by the queue's own takeover, or ended already —
   * and queues it only if it never was; then its delivery is recorded here. Not awaited (see handle).
   */
  resume(fire: TakenFire): void {
    const run = async () => {
      const trigger = await this.deps.store.get(fire.trigger_id);
      // Rows written before prompts were kept: the prompt made again from the trigger as it is now.
      const prompt = fire.prompt ?? (trigger && promptOf(trigger, fire.cause ?? ''));
      if (prompt === undefined) throw new Error('the trigger was deleted before its turn, cut off by a process that ended, could run again');
      const spec = { session_mode: trigger?.session_mode ?? null, workflow_id: trigger?.workflow_id ?? null };
      return this.turnOrWorkflow(spec, fire.agent_id, prompt, fire.id);
    };
    const mine = { id: fire.id, node: this.deps.node };
    void this.run(fire.agent_id, fire.depth, 'trigger', fire.trigger_id, fire.cause ?? '', run, mine);
  }

  private async turnOrWorkflow(
    t: Pick<Trigger, 'session_mode' | 'workflow_id'>,
    agentId: string,
    prompt: string,
    fireId: string,
  ): Promise<{ response: string; sessionId?: string }> {
    const key = `trigger:${fireId}`;
    if (!t.workflow_id) {
      const timeoutMs = this.deps.config().fire_timeout_secs * 1000;
      const r = await this.deps.queue().runTurn({ lane: 'trigger', agentId, message: prompt, origin: 'trigger', sessionMode: t.session_mode, timeoutMs, key });
      return { response: r.response, sessionId: r.sessionId };
    }
    const workflows = this.deps.workflows();
    if (!workflows) throw new Error('the workflows module is not running');
    // The run is the workflows module's once started: waiting for it outside the 'trigger' lane keeps long workflows
    // (whose steps wait for 'workflow' slots) from holding every trigger slot. The fire's id keys it: started once.
    const started = await workflows.start(t.workflow_id, prompt, 'trigger', key);
    const run = await started.done;
    if (run.status !== 'completed') throw new Error(`workflow run ${run.run_id} ${run.status}: ${run.error ?? ''}`);
    return { response: run.output };
  }

  /** A task posted for an agent that no trigger of its own fired for: the agent is told, so it can claim it. */
  private async wake(event: EventOf<typeof taskEvents, 'task.posted'>, matches: Match[], depth: number): Promise<void> {
    const { assignedTo, taskId, title } = event.data;
    if (!this.deps.config().assignee_wake || !assignedTo) return;
    const agent = this.resolve(assignedTo);
    if (!agent || matches.some((m) => (m.trigger.target_agent_id ?? m.trigger.agent_id) === agent.id)) return;
    const tools = this.deps.tools();
    if (tools && !tools.grants(agent.tools, { name: 'task_claim' })) return;
    const description = (await this.deps.board()?.get(taskId))?.description;
    const prompt = [
      `[TASK BOARD] A task was posted for you: "${title}" (id ${taskId}).`,
      description ? `Description: ${description}` : '',
      'Claim it with task_claim, do the work, then report the result with task_complete.',
    ]
      .filter(Boolean)
      .join('\n');
    void this.run(agent.id, depth, 'task', taskId, describeEvent(event), async () => {
      const r = await this.deps.queue().runTurn({ lane: 'task', agentId: agent.id, message: prompt, origin: 'task' });
      return { response: r.response, sessionId: r.sessionId };
    });
  }

  /** Runs a turn as part of the chain and delivers its reply, or records its failure. Never rejects. */
  private async run(
    agentId: string,
    depth: number,
    source: DeliverySource,
    sourceId: string,
    cause: string,
    turn: () => Promise<{ response: string; sessionId?: string }>,
    fire?: { id: string; node: string },
  ): Promise<void> {
    const leave = this.deps.chain.enter(agentId, depth);
    try {
      const { response, sessionId } = await turn();
      await this.report({ agentId, source, sourceId, sessionId, response, cause }, fire);
    } catch (err) {
      const error = (err as Error).message ?? String(err);
      this.deps.log.warn({ agentId, source, sourceId, error }, 'background turn failed');
      await this.report({ agentId, source, sourceId, error, cause }, fire).catch(() => undefined);
    } finally {
      leave();
    }
  }

  private report(req: DeliveryRequest, fire: { id: string; node: string } | undefined): Promise<unknown> {
    return fire ? this.deps.deliveries.deliverFire(req, fire) : this.deps.deliveries.deliver(req);
  }

  private resolve(ref: string): AgentRecord | undefined {
    const agents = this.deps.agents();
    return isUuid(ref) ? agents.get(ref.toLowerCase()) : agents.findByName(ref);
  }
}

/** A fired turn's message: the trigger's template with the line about the event. */
function promptOf(trigger: Pick<Trigger, 'prompt_template'>, cause: string): string {
  return trigger.prompt_template.replaceAll('{{event}}', cause);
}
