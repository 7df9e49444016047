import path from 'node:path';
import { defineModule, type SseWriter } from '@talon/module-sdk';
import { logsConfigSchema, type LogsConfig } from './config.ts';
import { DailyFile, pruneLogs } from './services/daily-file.ts';
import { LogBus } from './services/bus.ts';
import { Backlog } from './services/backlog.ts';
import { accessLog } from './services/access-log.ts';
import { streamRoutes } from './routes/stream.ts';

export default defineModule<LogsConfig>({
  configSchema: logsConfigSchema,
  register(ctx) {
    // Each node writes its own log file: in its own home, not in the data directory the nodes of a fleet share.
    const dir = path.join(ctx.nodeHome, 'logs');
    const file = ctx.config.file ? new DailyFile(dir) : undefined;
    const bus = new LogBus();
    const backlog = new Backlog(ctx.config.backlog_lines);
    const open = new Set<SseWriter>();
    // Until start() the kernel keeps every line for us (earlyLogLines); writing them here too would write
    // the lines logged between this tap and start() twice, and before the older ones.
    let writing = false;
    ctx.hooks.kernel.log.line.tap('logs', (line) => {
      if (writing) file?.write(line);
      backlog.push(line.trimEnd());
      bus.publish(line);
    });
    // The lines of start-up (a copy loaded later, by a reload, starts with an empty backlog: the early lines are the
    // run's first ones, not its latest).
    if (ctx.kernel.listenAddress() === undefined) for (const line of ctx.kernel.earlyLogLines()) backlog.push(line.trimEnd());
    ctx.hooks.kernel.http.response.tap('access log', accessLog(ctx.log));
    const closeStreams = () => {
      for (const sse of [...open]) sse.close();
    };
    // At shutdown, end the streams before the kernel waits for open requests to drain.
    ctx.hooks.kernel.kernel.shutdown.tapPromise('end streams', async () => closeStreams());
    return {
      start() {
        // The lines of start-up, written before this module listened (a copy loaded later, by a reload, has them in the file already).
        if (ctx.kernel.listenAddress() === undefined) for (const line of ctx.kernel.earlyLogLines()) file?.write(line);
        writing = true;
        const pruned = pruneLogs(dir, ctx.config.retention_days);
        if (pruned.length) ctx.log.info({ files: pruned }, 'pruned old log files');
      },
      // Unloading ends the streams (each close unsubscribes); clients reconnect to the next copy.
      stop: async () => {
        closeStreams();
        await file?.end();
      },
      routes: (app) => streamRoutes(app, bus, backlog, open),
    };
  },
});
