import { defineModule } from '@talon/module-sdk';
import { agentHooks, agentRegistry, agentRunner, agentTools } from '@talon/agents';
import { kvMemory } from '@talon/memory';
import { netFetch } from '@talon/net';
import { invokeGate, patchService, sandboxService } from '@talon/tools';
import { execPolicyAlias, toolInvokeSchema, toolsConfigSchema, type ToolsConfig } from './config.ts';
import { builtinTools } from './services/builtin.ts';
import { patchPaths } from './services/patch-paths.ts';
import { createSandbox } from './services/sandbox.ts';
import { startSandboxed } from './services/sandbox-process.ts';
import type { ToolDeps } from './services/deps.ts';
import { toolRoutes } from './routes/tools.ts';
import { invokePolicy, invokeRefusal } from './services/invoke-policy.ts';

export default defineModule<ToolsConfig>({
  configSchema: toolsConfigSchema,
  configKeys: { tool_invoke: toolInvokeSchema },
  configAliases: [execPolicyAlias],
  register(ctx) {
    const sandbox = createSandbox(() => ctx.config.exec_policy.isolation);
    // Resolved at call time through live views, so reloads of the agents, memory or net module are picked up.
    const deps: ToolDeps = {
      config: () => ctx.config,
      registry: () => ctx.use(agentRegistry),
      runner: () => ctx.use(agentRunner),
      memory: () => ctx.tryUse(kvMemory),
      net: () => ctx.use(netFetch),
      sandbox,
    };
    const mine = builtinTools(deps);
    ctx.hooks.tap(agentHooks).tools.tap('builtin', (list) => [...list, ...mine]);
    ctx.provide(patchService, patchPaths);
    ctx.provide(sandboxService, { run: (request) => sandbox.run(request), start: async (request) => startSandboxed(request, await sandbox.isolation()) });
    ctx.provide(invokeGate, { refusal: (tool) => invokeRefusal(invokePolicy(ctx.config), tool) });
    const tools = ctx.use(agentTools);
    return {
      routes: (app) => toolRoutes(app, tools, () => ctx.config),
    };
  },
});
