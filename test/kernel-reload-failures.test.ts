import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestKernel, type TestKernel } from '@talon/testing';

// A provider module and a consumer of its service; each test rewrites the provider and reloads it.
const root = mkdtempSync(path.join(tmpdir(), 'talon-reload-fail-'));
const prov = path.join(root, 'prov');
const cons = path.join(root, 'cons');

interface Version {
  /** What the service answers. */
  value: string;
  registerThrows?: boolean;
  startThrows?: boolean;
  /** An extra route path (a clash when it is the consumer's). */
  extraRoute?: string;
  /** A contract to import besides the provider's own (undeclared: the loader refuses it). */
  extraImport?: string;
}

function writeProvider(v: Version): void {
  writeFileSync(
    path.join(prov, 'index.ts'),
    `import { defineModule } from '@talon/module-sdk';
import { provSvc } from '@talon/prov';
${v.extraImport ? `import * as extra from '@talon/${v.extraImport}';\nvoid extra;` : ''}
export default defineModule({
  register(ctx) {
    ctx.provide(provSvc, { value: () => ${JSON.stringify(v.value)} });
    ctx.hooks.kernel.http.response.tap('count', () => undefined);
    ${v.registerThrows ? "throw new Error('register refuses');" : ''}
    return {
      start() {
        ${v.startThrows ? "throw new Error('start refuses');" : ''}
      },
      routes(app) {
        app.get('/api/prov', async () => ({ value: ${JSON.stringify(v.value)}, rows: await ctx.store.many('SELECT * FROM prov_items') }));
        ${v.extraRoute ? `app.get(${JSON.stringify(v.extraRoute)}, async () => ({}));` : ''}
      },
    };
  },
});
`,
  );
}

function addMigration(name: string, sql: string): void {
  writeFileSync(path.join(prov, 'migrations', name), sql);
}

before(() => {
  mkdirSync(path.join(prov, 'migrations'), { recursive: true });
  mkdirSync(cons, { recursive: true });
  writeFileSync(path.join(prov, 'module.toml'), 'name = "prov"\nversion = "1.0.0"\nprovides = ["prov.svc"]\n');
  writeFileSync(
    path.join(prov, 'api.ts'),
    "import { serviceRef } from '@talon/module-sdk';\nexport const provSvc = serviceRef<{ value(): string }>('prov.svc');\n",
  );
  addMigration('0001_items.sql', "CREATE TABLE prov_items (name TEXT);\nINSERT INTO prov_items VALUES ('one');\n");
  writeProvider({ value: 'v1' });
  writeFileSync(path.join(cons, 'module.toml'), 'name = "cons"\nversion = "1.0.0"\ndepends = ["prov"]\n');
  writeFileSync(
    path.join(cons, 'index.ts'),
    `import { defineModule } from '@talon/module-sdk';
import { provSvc } from '@talon/prov';

export default defineModule({
  register(ctx) {
    const svc = ctx.use(provSvc);
    return { routes(app) { app.get('/api/cons', async () => ({ got: svc.value() })); } };
  },
});
`,
  );
});

let k: TestKernel;
before(async () => {
  // SQLite in every run: these are hot reloads, which a kernel on PostgreSQL does not do (docs/fleet.md), and a failed
  // register() there keeps the migrations it applied (docs/decisions-fleet.md).
  k = await startTestKernel({ only: ['prov', 'cons'], database: 'sqlite', config: `log_level = "info"\nmodule_paths = ["${root}"]\n` });
});
after(async () => {
  await k?.stop();
  rmSync(root, { recursive: true, force: true });
});

const get = async (p: string) => {
  const res = await k.request(p);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};
const info = (id: string) => k.kernel.modules().find((m) => m.id === id)!;
const responseTaps = () => k.kernel.hooks.kernel.http.response.taps.map((t) => t.name);

/** The old copy serves exactly as before: its routes, its service to the consumer, its taps, its state. */
async function assertOldServes(value: string, taps: string[]): Promise<void> {
  assert.deepEqual((await get('/api/prov')).body.value, value);
  assert.deepEqual(await get('/api/cons'), { status: 200, body: { got: value } });
  assert.deepEqual(responseTaps(), taps, 'the failed copy tapped nothing, the old copy keeps its taps');
  assert.equal(info('prov').state, 'running');
  assert.equal(info('cons').state, 'running');
}

async function reloadFails(v: Version, message: RegExp, serving = 'v1'): Promise<void> {
  const taps = responseTaps();
  writeProvider(v);
  const result = await k.kernel.reloadModule('prov');
  assert.equal(result.ok, false);
  assert.match(result.error!, message);
  await k.kernel.settled();
  const last = info('prov').lastReload!;
  assert.equal(last.ok, false);
  assert.match(last.error!, message);
  assert.ok(Date.parse(last.at) > 0);
  await assertOldServes(serving, taps);
}

test('a reload whose register() throws leaves the old copy serving, with its service and taps', async () => {
  await reloadFails({ value: 'v2', registerThrows: true }, /register refuses/);
  assert.match(info('prov').lastReload!.location!, /prov[\\/]index\.ts:\d+:\d+/, 'the failure points at file and line');
});

test('a reload whose start() throws leaves the old copy serving', async () => {
  await reloadFails({ value: 'v2', startThrows: true }, /start refuses/);
});

test("a reload whose routes clash with another module's leaves the old copy serving, naming the route's owner and the line", async () => {
  await reloadFails({ value: 'v2', extraRoute: '/api/cons' }, /routes failed: GET \/api\/cons is already served by module 'cons'/);
  assert.match(info('prov').lastReload!.location!, /prov[\\/]index\.ts:\d+:\d+$/, 'the module’s own line, not the kernel’s');
});

test('a reload that imports an undeclared contract points at the importing line', async () => {
  await reloadFails({ value: 'v2', extraImport: 'cons' }, /imports @talon\/cons without declaring it/);
  assert.equal(info('prov').lastReload!.location, `${path.join(prov, 'index.ts')}:3:24`, 'the import of @talon/cons');
});

test('a reload that finds an applied migration changed points at the migration file', async () => {
  const file = path.join(prov, 'migrations', '0001_items.sql');
  addMigration('0001_items.sql', "CREATE TABLE prov_items (name TEXT, more TEXT);\nINSERT INTO prov_items VALUES ('one');\n");
  try {
    await reloadFails({ value: 'v2' }, /migration prov\/0001_items\.sql was changed after it was applied/);
    assert.equal(info('prov').lastReload!.location, file);
    const line = k.logLines().find((l) => l.includes('was changed after it was applied'));
    assert.ok(line && JSON.parse(line).module === 'prov' && JSON.parse(line).location === file, line);
  } finally {
    addMigration('0001_items.sql', "CREATE TABLE prov_items (name TEXT);\nINSERT INTO prov_items VALUES ('one');\n");
  }
});

test('a successful reload switches service, routes and taps in one step', async () => {
  writeProvider({ value: 'v2' });
  const result = await k.kernel.reloadModule('prov');
  assert.ok(result.ok, result.error);
  await k.kernel.settled();
  assert.deepEqual(await get('/api/cons'), { status: 200, body: { got: 'v2' } });
  assert.equal(responseTaps().filter((t) => t.startsWith('prov#')).length, 1, 'exactly one copy of the tap');
  assert.equal(info('prov').lastReload!.ok, true);
});

test('a new migration is rolled back when register() fails, and the old copy keeps serving', async () => {
  addMigration('0002_rename.sql', 'ALTER TABLE prov_items RENAME COLUMN name TO label;\n');
  await reloadFails({ value: 'v3', registerThrows: true }, /register refuses/, 'v2');
  const applied = k.kernel.database.prepare("SELECT id FROM kernel_migrations WHERE module = 'prov' ORDER BY id").all();
  assert.deepEqual(applied, [{ id: '0001_items' }], 'the migration is not recorded');
  assert.deepEqual((await get('/api/prov')).body.rows, [{ name: 'one' }], 'the column was not renamed');
});

test('after a new migration, a copy that fails to start stops the module instead of leaving old code on the new schema', async () => {
  // 0002_rename.sql is still there from the previous test.
  writeProvider({ value: 'v3', startThrows: true });
  const result = await k.kernel.reloadModule('prov');
  assert.equal(result.ok, false);
  await k.kernel.settled();
  assert.equal(info('prov').state, 'failed');
  assert.match(info('prov').error!, /new migration was applied but the new version failed: start refuses/);
  assert.equal((await get('/api/prov')).status, 404, 'the old copy no longer answers');
  assert.equal(info('cons').state, 'blocked', 'its hard dependants stop with it');
  assert.equal((await get('/api/cons')).status, 404);
  assert.equal(responseTaps().filter((t) => t.startsWith('prov#')).length, 0);
});

test('fixing the failed module with a good version brings it back', async () => {
  writeProvider({ value: 'v4' });
  const result = await k.kernel.reloadModule('prov');
  assert.ok(result.ok, result.error);
  await k.kernel.settled();
  assert.equal(info('prov').state, 'running');
  assert.deepEqual((await get('/api/prov')).body, { value: 'v4', rows: [{ label: 'one' }] });
  // The log says what happened, with the module named on each line.
  const lines = k.logLines().map((l) => JSON.parse(l) as { module?: string; msg: string; migrations?: string[] });
  assert.ok(lines.some((l) => l.msg === 'migrations applied' && l.module === 'prov' && l.migrations?.join() === '0002_rename'));
  assert.ok(lines.some((l) => l.msg === "module 'prov' reloaded" && l.module === 'prov'));
});
