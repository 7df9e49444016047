/** The agents' media tools, contributed through agentHooks.tools (the tap goes with this copy of the module). */
import { agentHooks } from '@talon/agents';
import type { ModuleContext } from '@talon/module-sdk';
import { fileTools } from './files.ts';
import { generateTools } from './generate.ts';
import type { ToolDeps } from './common.ts';
import { VideoTaskStore } from '../video/store.ts';

export function tapMediaTools(ctx: Pick<ModuleContext, 'hooks' | 'store'>, deps: ToolDeps): void {
  const tools = [...generateTools(deps, new VideoTaskStore(ctx.store)), ...fileTools(deps)];
  ctx.hooks.tap(agentHooks).tools.tap('media', (list) => [...list, ...tools]);
}
