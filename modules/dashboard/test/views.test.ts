/**
 * The views come from the modules: each running module's `[contributes.dashboard]` is listed (GET
 * /api/dashboard/views and the page's meta tag), a module disabled in config has none, a declaration that does not fit
 * or takes another's id is skipped with a warning, and a build that lacks a running module's view is rebuilt.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ModuleInfo } from '@talon/module-sdk';
import { startTestKernel, type TestKernel } from '@talon/testing';
import { DashboardViews } from '../services/views.ts';
import { lacking, pick } from '../services/coverage.ts';
import type { Bundle } from '../services/assets.ts';
const sqliteOnly = { skip: process.env.TALON_TEST_DB === 'postgres' && 'modules are not switched at run time on PostgreSQL (test/fleet-reload.test.ts)' };

let k: TestKernel;
before(async () => {
  k = await startTestKernel({ only: ['dashboard', 'system', 'config-api', 'goals', 'tasks', 'agents'] });
});
after(() => k?.stop());

const ids = (views: { id: string }[]) => views.map((v) => v.id);

interface Listed {
  module: string;
  id: string;
  title: string;
  group: string;
  order: number;
}
const listed = async () => ((await (await k.request('/api/dashboard/views')).json()) as { views: Listed[] }).views;

test("GET /api/dashboard/views lists the running modules' views in navigation order; a module disabled in config has none", sqliteOnly, async () => {
  assert.equal((await k.request('/api/dashboard/views')).status, 200);
  assert.deepEqual(ids(await listed()), ['home', 'chat', 'agents', 'files', 'goals', 'tasks', 'models', 'config', 'modules']);
  assert.deepEqual((await listed())[5], { module: 'tasks', id: 'tasks', title: 'Task board', group: 'Automation', order: 150 });
  // Switched off (written to [modules] disabled of config.toml): its view goes at once.
  assert.equal((await k.request('/api/modules/goals/disable', { method: 'PUT' })).status, 200);
  const views = await listed();
  assert.deepEqual(ids(views), ['home', 'chat', 'agents', 'files', 'tasks', 'models', 'config', 'modules']);
  // The page names the same views, so the app shows them without asking (no inline script: a meta tag).
  const html = await (await k.request('/')).text();
  const meta = /<meta name="talon-views" content="([^"]*)">/.exec(html)?.[1] ?? '';
  const fromPage = JSON.parse(meta.replace(/&#(\d+);/g, (_, c: string) => String.fromCharCode(Number(c)))) as { id: string }[];
  assert.deepEqual(ids(fromPage), ids(views));
});

const info = (id: string, dashboard: unknown, state: ModuleInfo['state'] = 'running'): ModuleInfo => ({
  id,
  version: '1.0.0',
  description: '',
  state,
  critical: false,
  depends: [],
  optionalDepends: [],
  dependants: [],
  contributes: dashboard === undefined ? {} : { dashboard: dashboard as Record<string, unknown> },
  dir: `/modules/${id}`,
  thirdParty: id.startsWith('x-'),
});
const view = (id: string, order: number, more: Record<string, unknown> = {}) => ({ id, title: id, group: 'G', order, entry: `dashboard/${id}.tsx`, ...more });

test('a view is listed while its module and the modules it requires run, by order; ids are unique', () => {
  const warned: string[] = [];
  const views = new DashboardViews((module, problem) => warned.push(`${module}: ${problem}`));
  const modules = [
    info('a', { views: [view('two', 20), view('needs-b', 5, { requires: ['b'] })] }),
    info('b', { views: [view('one', 10)] }, 'disabled'),
    info('c', { views: [view('two', 1), view('three', 30)] }),
  ];
  const listed = views.listed(modules, () => true);
  assert.deepEqual(ids(listed), ['two', 'three']);
  assert.equal(listed[0]!.module, 'a', 'the first module to declare an id keeps it');
  assert.deepEqual(warned, ["c: its view 'two' is skipped: another running module has a view of that id"]);
  assert.deepEqual(ids(views.listed(modules, (_module, id) => id !== 'three')), ['two'], 'only what the served build holds');
});

test('a declaration that does not fit the schema is skipped, with one warning naming what is wrong', () => {
  const warned: string[] = [];
  const views = new DashboardViews((module, problem) => warned.push(`${module}: ${problem}`));
  const modules = [info('bad', { views: [view('up', 1, { entry: 'dashboard/../../kernel/x.tsx' })] }), info('ok', { views: [view('fine', 2)] })];
  assert.deepEqual(ids(views.listed(modules, () => true)), ['fine']);
  views.listed(modules, () => true);
  assert.equal(warned.length, 1, 'warned once, not at every request');
  assert.match(warned[0]!, /^bad: \[contributes\.dashboard\] does not fit, skipped: \/views\/0\/entry must match pattern/);
});

test('a build lacking a running view, or a third-party module changed since, is not served: the data folder build is', () => {
  const running = new DashboardViews(() => undefined).running([info('a', { views: [view('one', 1)] }), info('x-third', { views: [view('two', 2)] })]);
  const manifest = { views: [{ module: 'a', id: 'one' }], stamps: {} };
  assert.deepEqual(
    lacking(manifest, running, () => 's1'),
    ['x-third/two: not built'],
  );
  const full = { views: [...manifest.views, { module: 'x-third', id: 'two' }], stamps: { 'x-third': 's1' } };
  assert.deepEqual(
    lacking(full, running, () => 's1'),
    [],
  );
  assert.deepEqual(
    lacking(full, running, () => 's2'),
    ['x-third: its dashboard/ folder changed since the build'],
  );

  const bundle = (builtAt: number, m: Bundle['manifest']) => ({ builtAt: new Date(builtAt), manifest: m }) as Bundle;
  const onlyA = running.slice(0, 1);
  const install = bundle(100, manifest);
  assert.equal(pick(install, bundle(200, manifest), onlyA), install, 'the install build while it serves every view');
  const own = bundle(200, { views: full.views, stamps: {} });
  const withThird = running.map((m) => ({ ...m, thirdParty: false }));
  assert.equal(pick(install, own, withThird), own);
  assert.equal(pick(bundle(300, manifest), own, withThird), undefined, 'an older data-folder build is built again');
});
