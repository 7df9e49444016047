import { defineModule } from '@talon/module-sdk';
import { agentHooks, agentRegistry, agentRunner, agentTools } from '@talon/agents';
import { kvMemory } from '@talon/memory';
import { invokeGate, patchService, safeNet as safeNetRef, sandboxService } from '@talon/tools';
import { execPolicyAlias, toolInvokeSchema, toolsConfigSchema, type ToolsConfig } from './config.ts';
import { builtinTools } from './services/builtin.ts';
import { patchPaths } from './services/patch-paths.ts';
import { safeNet } from './services/safe-net.ts';
import { createSandbox } from './services/sandbox.ts';
import type { ToolDeps } from './services/deps.ts';
import { toolRoutes } from './routes/tools.ts';
import { invokePolicy, invokeRefusal } from './services/invoke-policy.ts';

export default defineModule<ToolsConfig>({
  configSchema: toolsConfigSchema,
  configKeys: { tool_invoke: toolInvokeSchema },
  configAliases: [execPolicyAlias],
  register(ctx) {
    const sandbox = createSandbox(() => ctx.config.exec_policy.isolation);
    // Resolved at call time through live views, so reloads of the agents or memory module are picked up.
    const deps: ToolDeps = {
      config: () => ctx.config,
      registry: () => ctx.use(agentRegistry),
      runner: () => ctx.use(agentRunner),
      memory: () => ctx.tryUse(kvMemory),
      sandbox,
    };
    const mine = builtinTools(deps);
    ctx.hooks.tap(agentHooks).tools.tap('builtin', (list) => [...list, ...mine]);
    ctx.provide(patchService, patchPaths);
    ctx.provide(sandboxService, { run: (request) => sandbox.run(request) });
    ctx.provide(safeNetRef, safeNet);
    ctx.provide(invokeGate, { refusal: (tool) => invokeRefusal(invokePolicy(ctx.config), tool) });
    const tools = ctx.use(agentTools);
    return {
      routes: (app) => toolRoutes(app, tools, () => ctx.config),
    };
  },
});
