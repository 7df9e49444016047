import { defineModule, isUuid, notFound } from '@talon/module-sdk';
import { agentHooks, agentRegistry, agentRunner, sessionStore } from '@talon/agents';
import { taskBoard, taskQueue } from '@talon/tasks';
import { tasksConfigSchema, type TasksConfig } from './config.ts';
import { Board } from './services/board.ts';
import { Queue } from './services/queue.ts';
import { boardTools } from './services/tools.ts';
import { taskRoutes } from './routes/tasks.ts';
import { queueRoutes } from './routes/queue.ts';

export default defineModule<TasksConfig>({
  configSchema: tasksConfigSchema,
  register(ctx) {
    const config = () => ctx.config;
    const registry = () => ctx.use(agentRegistry);
    const board = new Board({ db: ctx.db, events: ctx.events, config, agents: () => ctx.tryUse(agentRegistry) });
    const queue = new Queue({ registry, runner: () => ctx.use(agentRunner), sessions: () => ctx.use(sessionStore), config });
    const checkAssignee = (assignee: string) => {
      const found = isUuid(assignee) ? registry().get(assignee.toLowerCase()) : registry().findByName(assignee);
      if (!found) throw notFound(`agent '${assignee}' not found`);
    };
    ctx.provide(taskBoard, board);
    ctx.provide(taskQueue, queue);
    const tools = boardTools(board, checkAssignee);
    ctx.hooks.tap(agentHooks).tools.tap('task-board', (list) => [...list, ...tools]);
    // A killed agent's claims go back to the board for someone else.
    ctx.events.subscribe('agent.terminated', (event) => board.releaseAgent(event.data.agentId));
    return {
      start() {
        board.sweep();
        ctx.setInterval(() => board.sweep(), ctx.config.sweep_interval_secs * 1000);
      },
      routes(app) {
        taskRoutes(app, board, checkAssignee);
        queueRoutes(app, board, queue);
      },
    };
  },
});
