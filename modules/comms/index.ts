import { defineModule } from '@talon/module-sdk';
import { agentEvents, agentHooks, agentRegistry, agentRunner } from '@talon/agents';
import { taskEvents } from '@talon/tasks';
import { peerNetwork } from '@talon/peers';
import { commsConfigSchema, type CommsConfig } from './config.ts';
import { CommsLog } from './services/log.ts';
import { commsRoutes } from './routes/comms.ts';
import { logToolCall } from './services/tool-calls.ts';

export default defineModule<CommsConfig>({
  configSchema: commsConfigSchema,
  register(ctx) {
    const log = new CommsLog(() => ctx.config.history);
    ctx.events.of(agentEvents).subscribe(['agent.spawned', 'agent.terminated'], (event) => log.fromBus(event));
    ctx.events.of(taskEvents).subscribe('task.*', (event) => log.fromBus(event));
    ctx.hooks.tap(agentHooks).afterToolCall.tapPromise('comms', async (call) => logToolCall(log, ctx.use(agentRegistry), call));
    return {
      routes: (app) =>
        commsRoutes(app, {
          agents: () => ctx.use(agentRegistry),
          runner: () => ctx.use(agentRunner),
          peers: () => ctx.tryUse(peerNetwork),
          log,
          config: () => ctx.config,
        }),
    };
  },
});
