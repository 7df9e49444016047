// What a module declares for the dashboard, `[contributes.dashboard]` of its module.toml, and its one schema: the
// build reads it to know which view files to build (scripts/build-dashboard.mjs, app/vite.config.mjs), the service to
// list the views of the running modules (services/views.ts). Plain JavaScript: the build runs under plain node.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import { parse } from 'smol-toml';

const viewSchema = {
  type: 'object',
  properties: {
    // The route (#/<id>) and the view's name in the build; unique among the running modules.
    id: { type: 'string', pattern: '^[a-z][a-z0-9-]{0,39}$' },
    title: { type: 'string', minLength: 1, maxLength: 60 },
    // The navigation heading; headings come in the order of their lowest `order`.
    group: { type: 'string', minLength: 1, maxLength: 40 },
    order: { type: 'integer', minimum: 0, maximum: 100000 },
    // A .tsx file in the module's dashboard/ folder whose default export is the view's component.
    entry: { type: 'string', pattern: '^dashboard/(?!.*\\.\\.)[A-Za-z0-9_./-]+\\.tsx$', maxLength: 200 },
    // Other modules that must run for the view to be listed (its own module always must).
    requires: { type: 'array', items: { type: 'string', pattern: '^[a-z][a-z0-9-]*$' }, uniqueItems: true },
    // Fetched with the page's entry script (modulepreload): for the view a visit opens on.
    preload: { type: 'boolean' },
    // The view a visit without a route opens on (the lowest order among those declaring it), when that is not the first
    // in the navigation: the home comes first in the navigation, the chat is where a visit lands.
    landing: { type: 'boolean' },
    // GETs the view makes first, started beside the sign-in probe when a visit opens on it: without a route
    // parameter, and with one (`{param}` is the first, URI-encoded).
    first_reads: { type: 'array', items: { type: 'string', pattern: '^/api/', maxLength: 300 }, maxItems: 5 },
    first_reads_with_param: { type: 'array', items: { type: 'string', pattern: '^/api/.*\\{param\\}', maxLength: 300 }, maxItems: 5 },
    // A count beside the view's name in the navigation (pending approvals): `path` is a GET answering JSON whose
    // `field` is a number; 0 shows nothing. The shell reads it with the navigation, every 30 s, and when a view
    // says its counts changed (refreshBadges in the kit).
    badge: {
      type: 'object',
      properties: { path: { type: 'string', pattern: '^/api/', maxLength: 300 }, field: { type: 'string', pattern: '^[a-z_][a-z0-9_]{0,39}$' } },
      required: ['path', 'field'],
      additionalProperties: false,
    },
  },
  required: ['id', 'title', 'group', 'order', 'entry'],
  additionalProperties: false,
};

const contributionSchema = {
  type: 'object',
  properties: { views: { type: 'array', items: viewSchema, minItems: 1, maxItems: 20 } },
  required: ['views'],
  additionalProperties: false,
};

let validate;

/**
 * The views of one module's `[contributes.dashboard]` table, or the reason it does not fit (ajv's words).
 * @param {unknown} contribution
 * @returns {{ views: import('./view-declarations.d.mts').DeclaredView[] } | { problem: string }}
 */
export function checkContribution(contribution) {
  validate ??= new Ajv({ allErrors: true }).compile(contributionSchema);
  if (validate(contribution)) return { views: contribution.views };
  return { problem: validate.errors.map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ') };
}

/**
 * The views a module folder declares, with their entry files as absolute paths: what the build builds. A folder
 * with no declaration gives none; a bad declaration is an error naming the folder (the build stops on it).
 * @param {string} dir
 */
export function declaredViews(dir) {
  const manifest = parse(readFileSync(path.join(dir, 'module.toml'), 'utf8'));
  const contribution = manifest.contributes?.dashboard;
  if (contribution === undefined) return [];
  const checked = checkContribution(contribution);
  if ('problem' in checked) throw new Error(`${path.join(dir, 'module.toml')}: [contributes.dashboard]: ${checked.problem}`);
  return checked.views.map((v) => ({ ...v, module: manifest.name, dir, file: path.join(dir, v.entry) }));
}

/**
 * A fingerprint of a module's dashboard/ folder (its files' paths and contents): the build records it per module,
 * and the service rebuilds when a third-party module's views changed since (services/coverage.ts).
 * @param {string} dir
 */
export function dashboardStamp(dir) {
  const hash = createHash('sha256');
  const walk = (folder) => {
    for (const e of readdirSync(folder, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(folder, e.name);
      if (e.isDirectory()) walk(p);
      else hash.update(`${path.relative(dir, p)}\0`).update(readFileSync(p));
    }
  };
  if (existsSync(path.join(dir, 'dashboard'))) walk(path.join(dir, 'dashboard'));
  return hash.digest('hex').slice(0, 16);
}
