import { defineModule, isUuid, notFound } from '@talon/module-sdk';
import { agentEvents, agentHooks, agentRegistry, agentRunner, sessionStore } from '@talon/agents';
import { inboxHooks } from '@talon/inbox';
import { taskBoard, taskEvents, taskQueue } from '@talon/tasks';
import { tasksConfigSchema, type TasksConfig } from './config.ts';
import { Board } from './services/board.ts';
import { Queue, TOPIC } from './services/queue.ts';
import { boardTools } from './services/tools.ts';
import { taskRoutes } from './routes/tasks.ts';
import { queueRoutes } from './routes/queue.ts';

/** The bounded fallback of the change feed: how often the queue looks at its rows on its own. */
const POLL_MS = 1000;
const PRUNE_MS = 10 * 60_000;

export default defineModule<TasksConfig>({
  configSchema: tasksConfigSchema,
  events: [taskEvents],
  register(ctx) {
    const config = () => ctx.config;
    const registry = () => ctx.use(agentRegistry);
    const board = new Board({ store: ctx.store, events: ctx.events.of(taskEvents), config, agents: () => ctx.tryUse(agentRegistry) });
    const queue = new Queue({
      registry,
      runner: () => ctx.use(agentRunner),
      sessions: () => ctx.use(sessionStore),
      config,
      store: ctx.store,
      nodes: ctx.nodes,
      changes: ctx.changes,
      log: ctx.log,
      startedAt: ctx.kernel.startedAt.getTime(),
    });
    const checkAssignee = (assignee: string) => {
      const found = isUuid(assignee) ? registry().get(assignee.toLowerCase()) : registry().findByName(assignee);
      if (!found) throw notFound(`agent '${assignee}' not found`);
    };
    ctx.provide(taskBoard, board);
    ctx.provide(taskQueue, queue);
    // Tasks posted and not yet claimed: work waiting for an agent (or for someone to assign it).
    ctx.hooks.tryTap(inboxHooks)?.sources.tap('tasks', (list) => [...list, { name: 'tasks', pending: async () => (await board.counts()).pending }]);
    const tools = boardTools(board, checkAssignee);
    ctx.hooks.tap(agentHooks).tools.tap('task-board', (list) => [...list, ...tools]);
    // A killed agent's claims go back to the board for someone else.
    ctx.events.of(agentEvents).subscribe('agent.terminated', (event) => board.releaseAgent(event.data.agentId));
    return {
      async start() {
        await board.sweep();
        ctx.setInterval(() => board.sweep(), ctx.config.sweep_interval_secs * 1000);
        await queue.start();
        // Registered once started (their handlers use the store): another process queued, ended or cancelled a row;
        // a gone process's rows are taken over (one node wins each).
        ctx.changes.on(TOPIC, () => queue.refresh());
        ctx.nodes.onDead((node) => queue.takeOver(node));
        ctx.setInterval(() => queue.poll(), POLL_MS);
        ctx.setInterval(() => queue.prune(), PRUNE_MS);
      },
      stop() {
        // Its successor claims the turns from now on; callers still waiting here get their answers from a plain poll.
        queue.retire();
        drain(queue, ctx.log);
      },
      routes(app) {
        taskRoutes(app, board, checkAssignee);
        queueRoutes(app, board, queue);
      },
    };
  },
});

/** Polls for a retired copy's callers until none waits (or the store has closed: the service stopped). */
function drain(queue: Queue, log: { warn: (data: object, message: string) => void }): void {
  if (!queue.busy) return;
  const timer = setInterval(() => {
    if (!queue.busy) return clearInterval(timer);
    queue.drainOnce().catch((err: unknown) => {
      clearInterval(timer);
      log.warn({ err }, 'a retired queue stopped polling for its callers');
      queue.abandon(new Error(`the queue could no longer read its rows: ${(err as Error).message}`));
    });
  }, POLL_MS);
  timer.unref();
}
