import type { ModuleContext, Routes } from '@talon/module-sdk';
import { uptimeSeconds } from '../services/uptime.ts';

const healthSchema = {
  summary: 'Redacted health (public)',
  response: {
    200: { type: 'object', properties: { status: { type: 'string', enum: ['ok'] }, version: { type: 'string' } }, required: ['status', 'version'] },
  },
} as const;

const detailSchema = {
  summary: 'Full health: database, modules, memory',
  response: {
    200: {
      type: 'object',
      properties: {
        status: { type: 'string', enum: ['ok', 'degraded'] },
        version: { type: 'string' },
        uptime_seconds: { type: 'integer' },
        checks: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, status: { type: 'string' }, error: { type: 'string' } } } },
        modules: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' }, state: { type: 'string' } } } },
        memory: { type: 'object', additionalProperties: { type: 'integer' } },
      },
      required: ['status', 'version', 'uptime_seconds', 'checks', 'modules', 'memory'],
    },
  },
} as const;

async function databaseCheck(ctx: ModuleContext): Promise<{ name: string; status: 'ok' | 'error'; error?: string }> {
  try {
    const row = await ctx.store.one<{ ok?: number }>('SELECT 1 AS ok');
    return row?.ok === 1 ? { name: 'database', status: 'ok' } : { name: 'database', status: 'error', error: 'SELECT 1 returned no row' };
  } catch (err) {
    ctx.log.error({ err }, 'health: database check failed');
    return { name: 'database', status: 'error', error: 'database query failed' };
  }
}

export function healthRoutes(app: Routes, ctx: ModuleContext): void {
  // Public and redacted: no module list, no database detail (health_redaction).
  app.get('/api/health', { schema: healthSchema, config: { public: true, rateCost: 1, quiet: true } }, async () => ({
    status: 'ok' as const,
    version: ctx.kernel.version,
  }));

  app.get('/api/health/detail', { schema: detailSchema }, async () => {
    const checks = [await databaseCheck(ctx)];
    const modules = ctx.kernel.modules().map((m) => ({ id: m.id, state: m.state }));
    const failedModule = modules.some((m) => m.state === 'failed');
    const memory = process.memoryUsage();
    return {
      status: checks.every((c) => c.status === 'ok') && !failedModule ? ('ok' as const) : ('degraded' as const),
      version: ctx.kernel.version,
      uptime_seconds: uptimeSeconds(ctx.kernel),
      checks,
      modules,
      memory: { rss: memory.rss, heap_total: memory.heapTotal, heap_used: memory.heapUsed, external: memory.external, array_buffers: memory.arrayBuffers },
    };
  });
}
