import path from 'node:path';
import { defineModule, type FromSchema } from '@talon/module-sdk';
import { auditTrail } from '@talon/audit';
import { Backups } from './services/service.ts';
import { backupRoutes } from './routes/backup.ts';

const configSchema = {
  type: 'object',
  properties: {
    dir: { type: 'string', default: '', description: 'folder of the archives; empty: $TALON_HOME/backups' },
  },
  additionalProperties: false,
} as const;
type Config = FromSchema<typeof configSchema, { keepDefaultedPropertiesOptional: false }>;

export default defineModule<Config>({
  configSchema,
  register(ctx) {
    const backups = new Backups({
      db: ctx.db,
      home: ctx.home,
      dataDir: ctx.dataDir,
      moduleDir: ctx.dir,
      version: ctx.kernel.version,
      backupsDir: () => ctx.config.dir || path.join(ctx.home, 'backups'),
      config: ctx.kernel.config,
      audit: () => ctx.tryUse(auditTrail),
      events: ctx.events,
      log: ctx.log,
      modules: () => ctx.kernel.modules(),
      restart: (name) => ctx.kernel.reloadModule(name),
    });
    // A restore a crash interrupted after its commit point is finished here, in register(), before any module
    // starts and reads the folders it moves (the one I/O this module does outside start()).
    const recovered = backups.recover();
    if (recovered.finished.length) ctx.log.warn({ restores: recovered.finished }, 'finished a restore that was interrupted');
    return {
      async start() {
        if (recovered.config) await ctx.kernel.config.apply(recovered.config, '');
      },
      routes: (app) => backupRoutes(app, backups),
    };
  },
});
