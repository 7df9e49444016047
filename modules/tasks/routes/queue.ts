/** GET /api/queue/status: what waits, what runs, how fast work gets done, and each lane's cap. */
import type { Routes } from '@talon/module-sdk';
import type { Board } from '../services/board.ts';
import type { Queue } from '../services/queue.ts';

const MINUTE = 60_000;

export function queueRoutes(app: Routes, board: Board, queue: Queue): void {
  app.get(
    '/api/queue/status',
    { schema: { summary: 'Queue depth, running work, throughput per minute and per-lane concurrency' }, config: { quiet: true } },
    async () => {
      const [counts, lanes, turns, tasks] = await Promise.all([board.counts(), queue.lanes(), queue.throughputPerMinute(), board.finishedSince(MINUTE)]);
      const sum = (key: 'active' | 'queued') => lanes.reduce((n, l) => n + l[key], 0);
      return {
        // Work that waits: tasks nobody has claimed yet, and background turns waiting for a lane slot.
        depth: counts.pending + sum('queued'),
        // Work under way: claimed tasks, and background turns running in a lane.
        running: counts.in_progress + sum('active'),
        throughput_per_minute: turns + tasks,
        tasks: { pending: counts.pending, in_progress: counts.in_progress },
        lanes,
      };
    },
  );
}
