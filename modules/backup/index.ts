import path from 'node:path';
import { defineModule } from '@talon/module-sdk';
import { auditTrail } from '@talon/audit';
import { backupEvents } from '@talon/backup';
import { Backups } from './services/service.ts';
import { backupRoutes } from './routes/backup.ts';
import { backupConfigSchema, type BackupConfig } from './config.ts';

export default defineModule<BackupConfig>({
  configSchema: backupConfigSchema,
  events: [backupEvents],
  register(ctx) {
    const backups = new Backups({
      store: ctx.store,
      home: ctx.home,
      dataDir: ctx.dataDir,
      moduleDir: ctx.dir,
      version: ctx.kernel.version,
      backupsDir: () => ctx.config.dir || path.join(ctx.home, 'backups'),
      config: ctx.kernel.config,
      audit: () => ctx.tryUse(auditTrail),
      events: ctx.events.of(backupEvents),
      nodes: ctx.nodes,
      log: ctx.log,
      modules: () => ctx.kernel.modules(),
      restart: (name) => ctx.kernel.reloadModule(name),
    });
    // A restore a crash interrupted after its commit point is finished before any module starts and reads the folders
    // it moves: on SQLite here, in register(), on the raw connection (the one I/O this module does outside start());
    // elsewhere in start() through the store.
    const early = ctx.store.dialect === 'sqlite' ? backups.recoverNow(ctx.store.sqlite()) : undefined;
    return {
      async start() {
        const recovered = early ?? (await backups.recoverLater());
        if (recovered.finished.length) ctx.log.warn({ restores: recovered.finished }, 'finished a restore that was interrupted');
        if (recovered.config) await ctx.kernel.config.apply(recovered.config, '');
        const removed = await backups.removeLeftovers();
        if (removed.length) ctx.log.info({ removed }, 'removed what unfinished backups and restores left');
        ctx.nodes.onDead((node) => backups.removeLeftoversOf(node));
      },
      routes: (app) => backupRoutes(app, backups),
    };
  },
});
