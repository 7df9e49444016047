import { defineModule } from '@talon/module-sdk';
import { auditTrail, type AuditRecord } from '@talon/audit';
import { Trail } from './services/trail.ts';
import { fromEvent } from './services/events.ts';
import { fromResponse } from './services/http.ts';
import { ModuleLifecycle, ModuleWatch, fromConfigChange } from './services/kernel.ts';
import { auditRoutes } from './routes/audit.ts';
import { auditConfigSchema, type AuditConfig } from './config.ts';

export default defineModule<AuditConfig>({
  configSchema: auditConfigSchema,
  register(ctx) {
    const trail = new Trail(ctx.store, (err, lost) => ctx.log.error({ err, queued: lost }, 'audit batch not written; retrying'));
    // A long queue is written at once; one flush is scheduled however many entries arrive before it runs.
    let flushSoon = false;
    const record: Trail['record'] = (entry) => {
      trail.record(entry);
      if (flushSoon || trail.pending() < ctx.config.max_batch) return;
      flushSoon = true;
      setImmediate(() => {
        flushSoon = false;
        void trail.flush();
      });
    };
    ctx.provide(auditTrail, {
      record,
      flush: () => trail.flush(),
      hold: () => trail.hold(),
      recent: (q) => trail.recent(q),
      verify: () => trail.verify(),
    });

    // A large queue: audit handlers only queue, so they keep up; a drop would be a hole in the trail.
    ctx.events.subscribe(
      '*',
      (event) => {
        const entry = fromEvent(event);
        if (entry) record(entry);
      },
      { queue: 100_000 },
    );
    const kernel = ctx.hooks.kernel;
    kernel.http.response.tap('audit', (e) => {
      const entry = fromResponse(e);
      if (entry) record(entry);
    });
    kernel.config.changed.tapPromise('audit', async (change) => record(fromConfigChange(change)));
    const lifecycle = new ModuleLifecycle(() => ctx.kernel.modules());
    const recordIf = (entry: AuditRecord | undefined) => entry && record(entry);
    kernel.module.loaded.tap('audit', (info) => recordIf(lifecycle.loaded(info)));
    kernel.module.unloaded.tap('audit', (info) => recordIf(lifecycle.unloaded(info)));
    kernel.kernel.shutdown.tapPromise('audit', async () => {
      lifecycle.shutdown();
      record({ event_type: 'shutdown', details: { reason: 'graceful stop' } });
      await trail.flush();
    });

    return {
      start() {
        const watch = new ModuleWatch(() => ctx.kernel.modules());
        ctx.setInterval(() => trail.flush(), ctx.config.flush_interval_ms);
        ctx.setInterval(() => watch.changes().forEach(record), ctx.config.module_poll_ms);
      },
      // Whatever is queued is written before the copy goes (a clean stop loses nothing).
      stop: () => trail.flush(),
      routes: (app) => auditRoutes(app, trail),
    };
  },
});
