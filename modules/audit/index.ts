import { defineModule, type FromSchema } from '@talon/module-sdk';
import { auditTrail, type AuditRecord } from '@talon/audit';
import { Trail } from './services/trail.ts';
import { fromEvent } from './services/events.ts';
import { fromResponse } from './services/http.ts';
import { ModuleLifecycle, ModuleWatch, fromConfigChange } from './services/kernel.ts';
import { auditRoutes } from './routes/audit.ts';

const configSchema = {
  type: 'object',
  properties: {
    flush_interval_ms: {
      type: 'integer',
      minimum: 10,
      maximum: 5000,
      default: 200,
      description: 'queued entries are written at least this often; a crash loses at most this window (a clean stop loses nothing)',
    },
    max_batch: { type: 'integer', minimum: 1, maximum: 100000, default: 2000, description: 'a queue this long is written at once' },
    module_poll_ms: { type: 'integer', minimum: 500, maximum: 60000, default: 2000, description: 'how often module failures are looked for' },
  },
  additionalProperties: false,
} as const;
type Config = FromSchema<typeof configSchema, { keepDefaultedPropertiesOptional: false }>;

export default defineModule<Config>({
  configSchema,
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
