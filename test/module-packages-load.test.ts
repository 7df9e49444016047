/**
 * A disabled module's packages are never loaded: a module imports its packages from its own code, and the kernel
 * loads no code of a disabled module. A real kernel in a child process (so the require cache is its own) starts with
 * every module that has packages of its own disabled in config.toml; none of those packages may be loaded. Switching
 * two of them on loads theirs, and still none of the others'. And a built-in module finds its packages in its own
 * folder first, as a third-party one does (one loader for both): a copy npm had to keep in modules/<name>/node_modules
 * (another version than the root's) is the one the module gets.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { startTestKernel } from '@talon/testing';
import { manifest, tempModules } from './support/temp-modules.ts';
const sqliteOnly = { skip: process.env.TALON_TEST_DB === 'postgres' && 'modules are not switched at run time on PostgreSQL (test/fleet-reload.test.ts)' };

const repo = path.resolve(import.meta.dirname, '..');
const modulesDir = path.join(repo, 'modules');

/** Each module's own runtime packages (dependencies and optional ones), for the modules that have any. */
const ownPackages = new Map(
  readdirSync(modulesDir).flatMap((name) => {
    const file = path.join(modulesDir, name, 'package.json');
    if (!existsSync(file)) return [];
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as { dependencies?: object; optionalDependencies?: object };
    const names = Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies });
    return names.length ? [[name, names] as const] : [];
  }),
);
/** Modules without dependencies on other disabled modules, whose packages load when their code is evaluated. */
const SWITCHED_ON = ['metrics', 'memory'];

test('a module disabled in config.toml loads none of its packages; enabling it loads them', sqliteOnly, async () => {
  assert.ok(
    SWITCHED_ON.every((name) => ownPackages.has(name)),
    'the modules switched on have packages of their own',
  );
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', path.join(repo, 'test', 'support', 'loaded-packages.ts')], {
    cwd: repo,
    env: { ...process.env, TALON_OFF: [...ownPackages.keys()].join(','), TALON_ON: SWITCHED_ON.join(',') },
    timeout: 180_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  const steps = new Map(
    stdout
      .split('\n')
      .filter((line) => line.startsWith('{"step"'))
      .map((line) => JSON.parse(line) as { step: string; packages: string[] })
      .map(({ step, packages }) => [step, new Set(packages)]),
  );
  const started = steps.get('started');
  const enabled = steps.get('enabled');
  assert.ok(started && enabled, `the child reported both steps; it printed:\n${stdout}`);
  assert.ok(started.has('fastify'), 'the report lists what the kernel loaded (the walk of the require cache works)');

  const loadedOf = (loaded: Set<string>, modules: string[]) =>
    modules.flatMap((name) =>
      ownPackages
        .get(name)!
        .filter((p) => loaded.has(p))
        .map((p) => `${name}: ${p}`),
    );
  assert.deepEqual(loadedOf(started, [...ownPackages.keys()]), [], 'no package of a disabled module is loaded');
  for (const name of SWITCHED_ON)
    assert.deepEqual(
      ownPackages.get(name)!.filter((p) => !enabled.has(p)),
      [],
      `enabling ${name} loads its packages`,
    );
  const stillOff = [...ownPackages.keys()].filter((name) => !SWITCHED_ON.includes(name));
  assert.deepEqual(loadedOf(enabled, stillOff), [], 'the modules still disabled have loaded nothing');
});

test("a built-in module's packages resolve from its own folder before the service's, statically and through lazyRequire", async () => {
  // picomatch and semver are the service's packages too: the module's own copies must win.
  const ownCopy = (name: string) => ({
    [`node_modules/${name}/package.json`]: JSON.stringify({ name, version: '0.0.1', main: 'index.js' }),
    [`node_modules/${name}/index.js`]: `module.exports = { whose: () => "the module's own ${name}" };\n`,
  });
  const mods = tempModules({
    probe: {
      'module.toml': manifest({ name: 'probe' }),
      ...ownCopy('picomatch'),
      ...ownCopy('semver'),
      'index.ts': `import { defineModule, lazyRequire } from '@talon/module-sdk';
import picomatch from 'picomatch';
const semver = lazyRequire<{ whose(): string }>(import.meta.url, 'semver');
export default defineModule({
  register: () => ({ routes(app) { app.get('/api/probe', async () => ({ imported: picomatch.whose(), lazy: semver().whose() })); } }),
});
`,
    },
  });
  // modulesDir: the folder of built-in modules (not a module_paths entry, which would make it a third party's).
  const k = await startTestKernel({ modulesDir: mods.root });
  try {
    const probe = k.kernel.modules().find((m) => m.id === 'probe');
    assert.equal(probe?.state, 'running', probe?.error);
    assert.deepEqual(await (await k.request('/api/probe')).json(), { imported: "the module's own picomatch", lazy: "the module's own semver" });
  } finally {
    await k.stop();
    mods.remove();
  }
});
