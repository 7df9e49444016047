import { openSse, type Routes, type SseWriter } from '@talon/module-sdk';
import type { LogBus } from '../services/bus.ts';
import { LEVELS, lineLevel, type LevelName } from '../services/level.ts';

const query = {
  type: 'object',
  properties: { level: { type: 'string', enum: Object.keys(LEVELS) as LevelName[], description: 'lowest level to send (default: every line)' } },
} as const;

/** A client that reads slower than the service logs loses lines rather than growing memory. */
const MAX_BUFFERED_BYTES = 1024 * 1024;

export function streamRoutes(app: Routes, bus: LogBus, open: Set<SseWriter>): void {
  app.get(
    '/api/logs/stream',
    { schema: { summary: 'SSE of structured log lines (event `log`)', tags: ['system'], querystring: query } },
    async (request, reply) => {
      const min = request.query.level ? LEVELS[request.query.level] : 0;
      const sse = openSse(request, reply);
      const raw = reply.raw;
      let dropped = 0;
      // Never log from inside the listener: that line would come straight back.
      const unsubscribe = bus.subscribe((line) => {
        if (min && (lineLevel(line) ?? 0) < min) return;
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
