import type { ModuleContext, NodeInfo, Routes } from '@talon/module-sdk';
import { uptimeSeconds } from '../services/uptime.ts';

const healthSchema = {
  summary: 'Redacted health (public)',
  response: {
    200: { type: 'object', properties: { status: { type: 'string', enum: ['ok'] }, version: { type: 'string' } }, required: ['status', 'version'] },
  },
} as const;

const detailSchema = {
  summary: "Full health: database, modules, memory, the service's nodes",
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
        database: { type: 'string', enum: ['sqlite', 'postgres'] },
        fleet: { type: 'boolean', description: 'on PostgreSQL: several nodes may share the database' },
        nodes: {
          type: 'array',
          description: "this service's processes on its database, seen in the last 24 hours",
          items: {
            type: 'object',
            properties: {
              id: { type: 'string' },
              host: { type: 'string' },
              pid: { type: 'integer' },
              listen: { type: ['string', 'null'] },
              state: { type: 'string', enum: ['live', 'stopped', 'dead'] },
              boot_at: { type: 'string', format: 'date-time' },
              heartbeat_at: { type: 'string', format: 'date-time' },
              self: { type: 'boolean' },
            },
            required: ['id', 'host', 'pid', 'listen', 'state', 'boot_at', 'heartbeat_at', 'self'],
          },
        },
      },
      required: ['status', 'version', 'uptime_seconds', 'checks', 'modules', 'memory', 'database', 'fleet', 'nodes'],
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

/** A node row as the API shows it: times as ISO strings. */
const nodeView = ({ bootAt, heartbeatAt, ...node }: NodeInfo) => ({
  ...node,
  boot_at: new Date(bootAt).toISOString(),
  heartbeat_at: new Date(heartbeatAt).toISOString(),
});

/** The nodes; none when the database cannot be read (the database check then says why). */
async function nodes(ctx: ModuleContext): Promise<ReturnType<typeof nodeView>[]> {
  try {
    return (await ctx.nodes.list()).map(nodeView);
  } catch (err) {
    ctx.log.error({ err }, 'health: the node list could not be read');
    return [];
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
      database: ctx.store.dialect,
      fleet: ctx.store.dialect === 'postgres',
      nodes: await nodes(ctx),
    };
  });
}
