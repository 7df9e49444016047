import { defineModule, STAGE } from '@talon/module-sdk';
import { agentHooks } from '../agents/api.ts';
import { checkpointsConfigSchema, type CheckpointsConfig } from './config.ts';
import { CheckpointManager } from './services/manager.ts';
import { checkpointRoutes } from './routes/checkpoints.ts';

let manager: CheckpointManager | undefined;

export default defineModule<CheckpointsConfig>({
  configSchema: checkpointsConfigSchema,
  register(ctx) {
    const current = new CheckpointManager(ctx.paths.checkpoints, ctx.db, ctx.log, () => ({
      snapshotTimeoutMs: ctx.config.snapshot_timeout_ms,
      maxFileBytes: ctx.config.max_file_bytes,
    }));
    manager = current;
    const hooks = ctx.hooks.tryTap(agentHooks);
    // Last, so the snapshot holds the state right before the tool runs.
    if (hooks) hooks.beforeToolCall.tapPromise('snapshot', (call) => current.beforeToolCall(call), { stage: STAGE.LAST });
    else ctx.log.info('agents module not loaded: no snapshots are taken (restore and listing still work)');
    ctx.onStop(() => current.close());
  },
  routes(app) {
    checkpointRoutes(app, () => manager!);
  },
});
