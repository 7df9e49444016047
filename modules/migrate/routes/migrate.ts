import path from 'node:path';
import { badRequest, notFound, type Routes } from '@talon/module-sdk';
import { SOURCES, detect, type Source } from '../services/sources.ts';
import { scanHome } from '../services/scan.ts';
import { applyPlan, type ApplyDeps } from '../services/apply.ts';

const scanBody = {
  type: 'object',
  properties: { path: { type: 'string', minLength: 1, maxLength: 4096 } },
  required: ['path'],
  additionalProperties: false,
} as const;
const migrateBody = {
  type: 'object',
  properties: {
    source: { type: 'string', enum: SOURCES },
    path: { type: 'string', minLength: 1, maxLength: 4096, description: "the source's home; default: the detected one" },
    source_dir: { type: 'string', minLength: 1, maxLength: 4096, description: "the reference's name for path" },
    dry_run: { type: 'boolean', default: false },
  },
  required: ['source'],
  additionalProperties: false,
} as const;

/**
 * Only homes the detection finds are read: a client cannot make the service list an arbitrary folder.
 * (Point LIBREFANG_HOME, OPENFANG_HOME or OPENCLAW_STATE_DIR at a home elsewhere.)
 */
function knownHome(given: string, source?: Source): { source: Source; path: string } {
  const wanted = path.resolve(given);
  const hit = detect().find((d) => d.path === wanted && (!source || d.source === source));
  if (!hit)
    throw badRequest(
      `'${given}' is not a detected ${source ?? 'migration source'} home (see GET /api/migrate/detect; point LIBREFANG_HOME, OPENFANG_HOME or OPENCLAW_STATE_DIR at it)`,
    );
  return hit;
}

const summary = (plan: ReturnType<typeof scanHome>) => {
  const count = (kind: string) => plan.items.filter((i) => i.kind === kind).map((i) => i.name);
  return {
    source: plan.source,
    path: plan.path,
    agents: plan.items.flatMap((i) => (i.kind === 'agent' ? [{ name: i.name, provider: i.provider, model: i.model }] : [])),
    memory: count('memory').length,
    sessions: count('session'),
    skills: count('skill'),
    schedules: count('schedule'),
    channels: count('channel'),
    config_keys: count('config'),
    warnings: plan.warnings,
  };
};

export function migrateRoutes(app: Routes, deps: ApplyDeps): void {
  const tags = ['migration'];
  app.get('/api/migrate/detect', { schema: { summary: 'Homes of other systems that can be imported', tags } }, async () => {
    const found = detect().map((d) => ({ ...d, scan: summary(scanHome(d.source, d.path)) }));
    return { detected: found.length > 0, sources: found, source: found[0]?.source ?? null, path: found[0]?.path ?? null };
  });
  app.post('/api/migrate/scan', { schema: { summary: 'What a migration would import', tags, body: scanBody } }, async (request) => {
    const home = knownHome(request.body.path);
    return summary(scanHome(home.source, home.path));
  });
  app.post(
    '/api/migrate',
    { schema: { summary: 'Imports from another system (idempotent; dry_run lists only)', tags, body: migrateBody }, config: { rateCost: 100 } },
    async (request) => {
      const { source, dry_run } = request.body;
      const given = request.body.path ?? request.body.source_dir;
      const home = given ? knownHome(given, source) : detect().find((d) => d.source === source);
      if (!home) throw notFound(`no ${source} home found (looked at its environment override and default folder)`);
      const outcome = await applyPlan(scanHome(source, home.path), dry_run, deps);
      request.log.info({ source, imported: outcome.imported.length, skipped: outcome.skipped.length, dry_run }, 'migration ran');
      return outcome;
    },
  );
}
