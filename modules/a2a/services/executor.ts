/**
 * Runs A2A tasks on agents: each task is one turn of the addressed agent
 * (agentRunner.run, origin 'a2a'), reported on the SDK's event bus as
 * submitted → working → the reply as artifact and final status message →
 * completed, failed or canceled. Cancelling aborts the turn.
 */
import type { Logger } from 'pino';
import type { AgentExecutor, ExecutionEventBus, RequestContext } from '@a2a-js/sdk/server';
import type { AgentRunner } from '@talon/agents';
import { message, status, textOf, textPart } from './messages.ts';
import { a2aCore, a2aServer } from './sdk.ts';

/** ServerCallContext.state key of the agent a request addresses (set by the routes). */
export const AGENT_KEY = 'talon.agent_id';

export class AgentTaskExecutor implements AgentExecutor {
  private readonly running = new Map<string, { abort: AbortController; contextId: string }>();

  constructor(
    private readonly runner: () => AgentRunner,
    private readonly log: Logger,
  ) {}

  /** Tasks running now (for shutdown). */
  abortAll(): void {
    for (const { abort } of this.running.values()) abort.abort();
  }

  async execute(ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId } = ctx;
    const agentId = String(ctx.task?.metadata?.agent_id ?? ctx.context.state.get(AGENT_KEY) ?? '');
    const ids = { taskId, contextId };
    if (!ctx.task) {
      bus.publish(
        a2aServer().AgentEvent.task({
          id: taskId,
          contextId,
          status: status(a2aCore().TaskState.TASK_STATE_SUBMITTED),
          history: [ctx.userMessage],
          artifacts: [],
          metadata: { agent_id: agentId },
        }),
      );
    }
    bus.publish(a2aServer().AgentEvent.statusUpdate({ taskId, contextId, status: status(a2aCore().TaskState.TASK_STATE_WORKING), metadata: undefined }));
    const abort = new AbortController();
    this.running.set(taskId, { abort, contextId });
    try {
      const result = await this.runner().run({ agentId, message: textOf(ctx.userMessage), origin: 'a2a', signal: abort.signal });
      if (abort.signal.aborted) return;
      const reply = message(a2aCore().Role.ROLE_AGENT, result.response, ids);
      bus.publish(
        a2aServer().AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: { artifactId: reply.messageId, name: 'response', description: '', parts: [textPart(result.response)], metadata: undefined, extensions: [] },
          append: false,
          lastChunk: true,
          metadata: undefined,
        }),
      );
      bus.publish(
        a2aServer().AgentEvent.statusUpdate({ taskId, contextId, status: status(a2aCore().TaskState.TASK_STATE_COMPLETED, reply), metadata: undefined }),
      );
    } catch (err) {
      if (abort.signal.aborted) return;
      this.log.warn({ task_id: taskId, agent_id: agentId, err: (err as Error).message }, 'A2A task failed');
      const reply = message(a2aCore().Role.ROLE_AGENT, `The agent could not answer: ${(err as Error).message}`, ids);
      bus.publish(
        a2aServer().AgentEvent.statusUpdate({ taskId, contextId, status: status(a2aCore().TaskState.TASK_STATE_FAILED, reply), metadata: undefined }),
      );
    } finally {
      this.running.delete(taskId);
      bus.finished();
    }
  }

  async cancelTask(taskId: string, bus: ExecutionEventBus): Promise<void> {
    const running = this.running.get(taskId);
    running?.abort.abort();
    bus.publish(
      a2aServer().AgentEvent.statusUpdate({
        taskId,
        contextId: running?.contextId ?? '',
        status: status(a2aCore().TaskState.TASK_STATE_CANCELED),
        metadata: undefined,
      }),
    );
    if (!running) bus.finished();
  }
}
