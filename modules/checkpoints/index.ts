import { defineModule, STAGE } from '@talon/module-sdk';
import { agentHooks, agentRegistry } from '@talon/agents';
import { patchService } from '@talon/tools';
import { checkpointsConfigSchema, type CheckpointsConfig } from './config.ts';
import { CheckpointManager } from './services/manager.ts';
import { checkpointRoutes } from './routes/checkpoints.ts';

/** The change-feed topic of shadow indexes; key = the repository's git dir. */
const INDEX_TOPIC = 'index';

export default defineModule<CheckpointsConfig>({
  configSchema: checkpointsConfigSchema,
  register(ctx) {
    const manager = new CheckpointManager({
      // Shadow repositories are the service's own bookkeeping: the module's private data folder.
      root: () => ctx.dataDir,
      store: ctx.store,
      log: ctx.log,
      settings: () => ({
        snapshotTimeoutMs: ctx.config.snapshot_timeout_ms,
        maxFileBytes: ctx.config.max_file_bytes,
        retention: { maxCount: ctx.config.max_checkpoints, maxAgeDays: ctx.config.max_age_days },
      }),
      patchPaths: (patch) => ctx.tryUse(patchService)?.paths(patch) ?? [],
      indexChanged: (gitDir) => ctx.changes.note(INDEX_TOPIC, gitDir),
    });
    // Another process on this home changed a shadow index (a snapshot or a restore there).
    ctx.changes.on(INDEX_TOPIC, (gitDir) => manager.forgetIndex(gitDir));
    const hooks = ctx.hooks.tryTap(agentHooks);
    // Last, so the snapshot holds the state right before the tool runs.
    if (hooks) hooks.beforeToolCall.tapPromise('snapshot', (call) => manager.beforeToolCall(call), { stage: STAGE.LAST });
    else ctx.log.info('agents module not loaded: no snapshots are taken (restore and listing still work)');
    ctx.onStop(() => manager.close());
    return {
      start() {
        // Retention also for repositories no snapshot reaches any more; the first pass soon after start.
        const sweep = () => void manager.sweep();
        ctx.setTimeout(sweep, 60_000).unref();
        ctx.setInterval(sweep, ctx.config.retention_sweep_hours * 3_600_000).unref();
      },
      routes: (app) => checkpointRoutes(app, manager, () => ctx.tryUse(agentRegistry)),
    };
  },
});
