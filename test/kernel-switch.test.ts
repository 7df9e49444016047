/**
 * Modules are switched on and off while the service runs (issue 23, item 4): PUT /api/modules/{name}/enable|disable,
 * an edit of [modules] picked up by POST /api/config/reload and by the dev watcher. A module stops or starts with the
 * modules that depend on it, in one step and all or nothing; a security module is refused with the reason.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestKernel, type TestKernel } from '@talon/testing';
import { manifest, tempModules } from './support/temp-modules.ts';
const sqliteOnly = { skip: process.env.TALON_TEST_DB === 'postgres' && 'modules are not switched at run time on PostgreSQL (test/fleet-reload.test.ts)' };

// The built-in modules these tests need, as a modules folder of their own (the rest would only slow the test down);
// auth imports the contracts of oidc and pairing, which are installed but left off; config-api the vault's of secrets.
const builtins = mkdtempSync(path.join(tmpdir(), 'talon-builtins-'));
for (const name of ['config-api', 'error-envelope', 'auth', 'oidc', 'pairing', 'secrets'])
  symlinkSync(path.resolve('modules', name), path.join(builtins, name));
const OFF = ['oidc', 'pairing'];

const routeModule = (name: string, extra = '') => `import { defineModule } from '@talon/module-sdk';
const probe = (globalThis as { switchProbe?: string[] }).switchProbe!;
export default defineModule({
  register(ctx) {
    return {
      ${extra}
      run(signal) {
        probe.push('${name} runs');
        signal.addEventListener('abort', () => probe.push('${name} signal aborted'), { once: true });
      },
      routes(app) {
        app.get('/api/${name}', async () => ({ module: '${name}' }));
      },
    };
  },
});
`;
const mods = tempModules({
  base: { 'module.toml': manifest({ name: 'base' }), 'index.ts': routeModule('base') },
  child: { 'module.toml': manifest({ name: 'child', depends: ['base'] }), 'index.ts': routeModule('child') },
  dormant: { 'module.toml': manifest({ name: 'dormant', enabled: false }), 'index.ts': routeModule('dormant') },
  broken: {
    'module.toml': manifest({ name: 'broken' }),
    'index.ts': routeModule('broken', `start() { throw new Error('cannot reach its server'); },`),
  },
});
after(() => {
  mods.remove();
  rmSync(builtins, { recursive: true, force: true });
});

const KEY = 'switch-test-key-0123456789';
const configText = (disabled: string[]) =>
  `api_key = "${KEY}"\nmodule_paths = ["${mods.root}"]\n\n[modules]\n# what stays off\ndisabled = ${JSON.stringify([...OFF, ...disabled])}\n`;

async function boot(disabled: string[], dev = false): Promise<TestKernel> {
  (globalThis as { switchProbe?: string[] }).switchProbe = [];
  return startTestKernel({ modulesDir: builtins, dev, config: `${dev ? 'log_level = "info"\n' : ''}${configText(disabled)}` });
}

const call = (k: TestKernel, p: string, method = 'GET') => k.request(p, { method, headers: { authorization: `Bearer ${KEY}` } });
/** What GET /api/modules says of each module (the system module that serves it is not among these built-ins). */
const states = async (k: TestKernel) => Object.fromEntries(k.kernel.modules().map((m) => [m.id, m]));
const configFile = (k: TestKernel) => readFileSync(path.join(k.home, 'config.toml'), 'utf8');
/** Rewrites the [modules] disabled line of config.toml, as a person editing the file would. */
const editDisabled = (k: TestKernel, disabled: string[], extra = '') =>
  writeFileSync(path.join(k.home, 'config.toml'), configFile(k).replace(/^disabled = .*$/m, `disabled = ${JSON.stringify([...OFF, ...disabled])}`) + extra);
const probe = () => (globalThis as { switchProbe?: string[] }).switchProbe!;

test('disabling a module stops it and its dependants in one step, keeps the choice in config.toml, and enabling brings both back', sqliteOnly, async () => {
  const k = await boot(['broken']);
  try {
    assert.equal((await call(k, '/api/child')).status, 200);

    const res = await call(k, '/api/modules/base/disable', 'PUT');
    assert.equal(res.status, 200);
    const body = (await res.json()) as { module: { id: string; state: string }; changed: Array<{ id: string; previous: string; state: string }> };
    assert.deepEqual(body.module, { id: 'base', state: 'disabled', error: 'disabled in configuration' });
    assert.deepEqual(
      body.changed.sort((a, b) => a.id.localeCompare(b.id)),
      [
        { id: 'base', previous: 'running', state: 'disabled' },
        { id: 'child', previous: 'running', state: 'blocked' },
      ],
    );
    assert.equal((await call(k, '/api/base')).status, 404);
    assert.equal((await call(k, '/api/child')).status, 404);
    assert.equal((await states(k)).child.error, "depends on 'base', which is disabled");
    assert.match(configFile(k), /# what stays off\ndisabled = \[ "oidc", "pairing", "broken", "base" \]/, 'the comment is kept');
    await k.kernel.settled();
    assert.ok(probe().includes('base signal aborted') && probe().includes('child signal aborted'), probe().join(', '));

    const again = await call(k, '/api/modules/base/enable', 'PUT');
    assert.equal(again.status, 200);
    const enabled = (await again.json()) as { changed: Array<{ id: string; state: string }> };
    assert.deepEqual(enabled.changed.map((c) => `${c.id}:${c.state}`).sort(), ['base:running', 'child:running']);
    assert.deepEqual(await (await call(k, '/api/child')).json(), { module: 'child' });
    assert.match(configFile(k), /disabled = \[ "oidc", "pairing", "broken" \]/);
  } finally {
    await k.stop();
  }
});

test('a module switched off stays off after a restart', sqliteOnly, async () => {
  const k = await boot([]);
  const home = k.home;
  try {
    assert.equal((await call(k, '/api/modules/child/disable', 'PUT')).status, 200);
  } finally {
    await k.kernel.stop('test');
  }
  const again = await startTestKernel({ modulesDir: builtins, home, config: undefined });
  try {
    const s = await states(again);
    assert.equal(s.child.state, 'disabled');
    assert.equal(s.base.state, 'running');
  } finally {
    await again.stop();
    rmSync(home, { recursive: true, force: true });
  }
});

test('a security module is refused with the reason, and nothing changes', async () => {
  const k = await boot(['broken']);
  try {
    const before = configFile(k);
    const res = await call(k, '/api/modules/auth/disable', 'PUT');
    assert.equal(res.status, 400);
    const { error } = (await res.json()) as { error: string };
    assert.match(error, /'auth', a security module, and while 'api_key' is set.*allow_disable_critical/);
    assert.equal(configFile(k), before);
    assert.equal((await states(k)).auth.state, 'running');
    assert.equal((await k.request('/api/base')).status, 401, 'auth still guards');
  } finally {
    await k.stop();
  }
});

test('a module that fails to start is not switched on: 409 naming why, state and config.toml unchanged', sqliteOnly, async () => {
  const k = await boot(['broken']);
  try {
    const before = configFile(k);
    const res = await call(k, '/api/modules/broken/enable', 'PUT');
    assert.equal(res.status, 409);
    assert.match(((await res.json()) as { error: string }).error, /nothing changed: cannot reach its server/);
    assert.equal(configFile(k), before);
    assert.equal((await states(k)).broken.state, 'disabled');
    assert.equal((await call(k, '/api/broken')).status, 404);
    assert.equal((await call(k, '/api/base')).status, 200, 'the others keep serving');
  } finally {
    await k.stop();
  }
});

test('a module its manifest leaves off is enabled through [modules] enabled; unknown modules are 404', sqliteOnly, async () => {
  const k = await boot(['broken']);
  try {
    assert.equal((await states(k)).dormant.state, 'disabled');
    const res = await call(k, '/api/modules/dormant/enable', 'PUT');
    assert.equal(res.status, 200);
    assert.equal((await call(k, '/api/dormant')).status, 200);
    assert.match(configFile(k), /enabled = \[ "dormant" \]/);
    assert.equal((await call(k, '/api/modules/dormant/disable', 'PUT')).status, 200);
    assert.equal((await states(k)).dormant.state, 'disabled');
    assert.doesNotMatch(configFile(k), /enabled = \[ "dormant" \]/);

    const missing = await call(k, '/api/modules/nope/enable', 'PUT');
    assert.equal(missing.status, 404);
    assert.match(((await missing.json()) as { error: string }).error, /no module 'nope'/);
  } finally {
    await k.stop();
  }
});

test('a module folder added at run time follows [modules] enabled and disabled', async () => {
  const k = await boot(['broken']);
  try {
    writeFileSync(path.join(k.home, 'config.toml'), configFile(k).replace('[modules]', '[modules]\nenabled = ["latecomer"]'));
    assert.equal((await call(k, '/api/config/reload', 'POST')).status, 200);
    mods.write('latecomer', 'module.toml', manifest({ name: 'latecomer', enabled: false }));
    mods.write('latecomer', 'index.ts', routeModule('latecomer'));
    const added = await k.kernel.addModule(path.join(mods.root, 'latecomer'));
    assert.equal(added.ok, true, added.error);
    assert.deepEqual(await (await call(k, '/api/latecomer')).json(), { module: 'latecomer' });
  } finally {
    await k.stop();
    rmSync(path.join(mods.root, 'latecomer'), { recursive: true, force: true });
  }
});

test('POST /api/config/reload applies an edited [modules] disabled, and reports an unknown key as a warning', sqliteOnly, async () => {
  const k = await boot(['broken']);
  try {
    editDisabled(k, ['broken', 'base'], '\n[mystery_section]\nkey = 1\n');
    const res = await call(k, '/api/config/reload', 'POST');
    assert.equal(res.status, 200);
    const body = (await res.json()) as { changed: string[]; warnings: string[]; restart_required?: boolean };
    assert.deepEqual(body.changed.sort(), ['modules', 'mystery_section']);
    assert.deepEqual(body.warnings, ["unknown configuration key 'mystery_section' (ignored)"]);
    const s = await states(k);
    assert.deepEqual([s.base.state, s.child.state], ['disabled', 'blocked']);
  } finally {
    await k.stop();
  }
});

test('in dev mode an edit of config.toml switches modules without a request', sqliteOnly, async () => {
  const k = await boot(['broken'], true);
  try {
    editDisabled(k, ['broken', 'child']);
    for (let i = 0; i < 300 && (await states(k)).child.state !== 'disabled'; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal((await states(k)).child.state, 'disabled', k.logLines().join('\n'));
    assert.equal((await states(k)).base.state, 'running');
    assert.match(k.logLines().join('\n'), /config\.toml changed and was applied/);
  } finally {
    await k.stop();
  }
});
