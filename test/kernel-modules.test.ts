import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestKernel, type TestKernel } from '@talon/testing';
import { planModules } from '../kernel/loader/graph.ts';
import { readManifest } from '../kernel/loader/manifest.ts';

const fixtures = path.resolve('test/fixtures/modules');

const logText = (k: TestKernel): string => k.logLines().join('');

/** A manifest as read from module.toml, for the planner. */
const m = (name: string, depends: string[] = [], optional: string[] = [], consumes: string[] = []) => ({
  ...readManifestDefaults,
  name,
  depends,
  optional_depends: optional,
  consumes,
  dir: '/x/' + name,
});
const readManifestDefaults = {
  version: '1.0.0',
  description: '',
  sdk: '*',
  provides: [],
  config_keys: [],
  all_events: false,
  critical: false,
  protects: [],
  enabled: true,
  entry: 'index.ts',
  contract: 'api.ts',
  contributes: {},
  thirdParty: false,
};

let k: TestKernel;
before(async () => {
  k = await startTestKernel({ modulesDir: fixtures, config: 'log_level = "info"\n[modules]\ndisabled = ["configured"]\n', keepHome: false });
});
after(() => k.stop());

const state = (id: string) => k.kernel.modules().find((m) => m.id === id);

test('modules start in dependency order and serve their routes', async () => {
  assert.equal(state('alpha')?.state, 'running');
  assert.equal(state('beta')?.state, 'running');
  const res = await k.request('/api/beta');
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { n: 1 });
  assert.deepEqual(await (await k.request('/api/beta')).json(), { n: 2 });
});

test('a module whose dependency is missing is not started, with one clear log line', async () => {
  assert.equal(state('gamma')?.state, 'blocked');
  assert.match(state('gamma')!.error!, /depends on 'missing-module', which is missing/);
  await k.kernel.settled();
  const lines = logText(k)
    .split('\n')
    .filter((l) => l.includes("module 'gamma' not started"));
  assert.equal(lines.length, 1);
});

test('a module whose dependency is disabled (manifest enabled=false) is blocked', () => {
  assert.equal(state('epsilon')?.state, 'disabled');
  assert.equal(state('delta')?.state, 'blocked');
  assert.match(state('delta')!.error!, /'epsilon', which is disabled/);
});

test('a module disabled in [modules] disabled is not loaded and its routes are absent', async () => {
  assert.equal(state('configured')?.state, 'disabled');
  assert.equal((await k.request('/api/configured')).status, 404);
});

test('a module that fails to start is failed and its dependants are blocked; the rest runs', async () => {
  assert.equal(state('boom')?.state, 'failed');
  assert.match(state('boom')!.error!, /boom refuses to start/);
  assert.equal(state('boom-child')?.state, 'blocked');
  assert.equal((await k.request('/api/boom')).status, 404);
  assert.equal((await k.request('/api/alpha')).status, 200);
});

test('a module that does not compile is failed with file and line', () => {
  assert.equal(state('broken')?.state, 'failed');
  assert.match(state('broken')!.error!, /broken[\\/]index\.ts:\d+:\d+/);
});

test('a dependency cycle fails its members', () => {
  assert.equal(state('cyc-a')?.state, 'failed');
  assert.match(state('cyc-a')!.error!, /dependency cycle/);
  assert.equal(state('cyc-b')?.state, 'failed');
});

test('optional dependencies order but do not block', async () => {
  assert.equal(state('zeta')?.state, 'running');
  assert.deepEqual(await (await k.request('/api/zeta')).json(), { beta: 'running' });
});

test('a module whose routes clash with another is left out; the other keeps its route', async () => {
  assert.equal(state('dup-route')?.state, 'failed');
  assert.deepEqual(await (await k.request('/api/alpha')).json(), { module: 'alpha' });
});

test('the plan orders dependencies first even against name order', () => {
  const plan = planModules([m('a', ['z']), m('b', [], ['a']), m('z')], () => true);
  assert.deepEqual(
    plan.order.map((x) => x.name),
    ['z', 'a', 'b'],
  );
});

test('optional dependencies in a cycle only order; they never fail the modules', () => {
  const plan = planModules([m('agents', [], ['memory']), m('memory', [], ['agents'])], () => true);
  assert.deepEqual(
    plan.order.map((x) => x.name),
    ['agents', 'memory'],
  );
  assert.ok([...plan.verdicts.values()].every((v) => v.state === 'load'));
});

test("consumes orders like an optional dependency (by the service's module)", () => {
  const plan = planModules([m('metrics', [], [], ['agents.registry']), m('agents')], () => true);
  assert.deepEqual(
    plan.order.map((x) => x.name),
    ['agents', 'metrics'],
  );
});

test("consuming only a module's events does not order: the observer is not stopped before what it observes", () => {
  // 'audit' sorts before 'zebra' by name: it stays first (and so stops last) when it only hears zebra's events.
  const plan = planModules([m('zebra'), m('audit', [], [], ['zebra.events'])], () => true);
  assert.deepEqual(
    plan.order.map((x) => x.name),
    ['audit', 'zebra'],
  );
  const both = planModules([m('zebra'), m('audit', [], [], ['zebra.events', 'zebra.registry'])], () => true);
  assert.deepEqual(
    both.order.map((x) => x.name),
    ['zebra', 'audit'],
  );
});

test("a module's [contributes.<owner>] tables reach the owner as data, through modules()", () => {
  assert.deepEqual(JSON.parse(JSON.stringify(state('zeta')?.contributes)), { beta: { greetings: ['hello'] } });
  assert.deepEqual(state('alpha')?.contributes, {});
});

test('a contributes entry that is not a table stops the module with its key named', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'talon-contributes-'));
  writeFileSync(path.join(dir, 'module.toml'), 'name = "x"\nversion = "1.0.0"\n[contributes]\nbeta = 3\n');
  assert.throws(() => readManifest(dir, true), /contributes\/beta/);
  rmSync(dir, { recursive: true, force: true });
});
