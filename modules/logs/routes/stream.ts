import { openSse, type Routes, type SseWriter } from '@talon/module-sdk';
import type { Backlog } from '../services/backlog.ts';
import type { LogBus } from '../services/bus.ts';
import { lineFilter } from '../services/filter.ts';
import { LEVELS, type LevelName } from '../services/level.ts';

const query = {
  type: 'object',
  properties: {
    level: { type: 'string', enum: Object.keys(LEVELS) as LevelName[], description: 'lowest level to send (default: every line)' },
    module: { type: 'string', minLength: 1, maxLength: 100, description: 'only lines of this module (its own, and the access lines of its routes)' },
    q: { type: 'string', minLength: 1, maxLength: 200, description: 'only lines holding this text (case-insensitive), e.g. a request id' },
    backlog: {
      type: 'integer',
      minimum: 0,
      maximum: 100000,
      default: 0,
      description: 'first send up to this many of the latest lines that pass the filters (from the last `backlog_lines` logged)',
    },
  },
  additionalProperties: false,
} as const;

/** A client that reads slower than the service logs loses lines rather than growing memory. */
const MAX_BUFFERED_BYTES = 1024 * 1024;

export function streamRoutes(app: Routes, bus: LogBus, backlog: Backlog, open: Set<SseWriter>): void {
  app.get(
    '/api/logs/stream',
    { schema: { summary: 'SSE of structured log lines (event `log`), the latest ones first with `backlog`', tags: ['system'], querystring: query } },
    async (request, reply) => {
      const { backlog: count = 0, ...filters } = request.query;
      const passes = lineFilter(filters);
      const sse = openSse(request, reply);
      const raw = reply.raw;
      let dropped = 0;
      // The backlog and the subscription in one turn: no line is missed or sent twice.
      if (count > 0) for (const line of backlog.all().filter(passes).slice(-count)) sse.send('log', line);
      // Never log from inside the listener: that line would come straight back.
      const unsubscribe = bus.subscribe((line) => {
        if (!passes(line)) return;
        if (raw.writableLength > MAX_BUFFERED_BYTES) {
          dropped++;
          return;
        }
        if (dropped) {
          sse.send('dropped', { count: dropped });
          dropped = 0;
        }
        sse.send('log', line);
      });
      open.add(sse);
      sse.onClose(() => {
        unsubscribe();
        open.delete(sse);
        // Logged after unsubscribing, so the line does not come back to this stream.
        request.log.debug({ subscribers: bus.size }, 'log stream closed');
      });
      sse.comment('connected');
    },
  );
}
