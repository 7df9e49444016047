import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestKernel } from '@talon/testing';
import { BootAbort, ConfigError } from '../kernel/kernel.ts';
import { manifest, tempModules } from './support/temp-modules.ts';

const guardIndex = (opts: { startThrows?: boolean; header?: string } = {}) => `import { defineModule } from '@talon/module-sdk';
export default defineModule({
  register: () => ({
    ${opts.startThrows ? "start() { throw new Error('guard cannot start'); }," : ''}
    http(app) {
      app.addHook('onRequest', (_req, reply, done) => { reply.header('x-guard', ${JSON.stringify(opts.header ?? 'v1')}); done(); });
    },
  }),
});
`;
const mods = tempModules({
  // A security module (critical) guarding every request, whose protection is configured by `guard_key`.
  guard: {
    'module.toml': manifest({ name: 'guard', critical: true, protects: ['guard_key'], config_keys: ['guard_key'] }),
    'index.ts': guardIndex(),
  },
  'always-guard': { 'module.toml': manifest({ name: 'always-guard', critical: true }), 'index.ts': guardIndex() },
  'failing-guard': { 'module.toml': manifest({ name: 'failing-guard', critical: true }), 'index.ts': guardIndex({ startThrows: true }) },
  flaky: {
    'module.toml': manifest({ name: 'flaky' }),
    'index.ts':
      "import { defineModule } from '@talon/module-sdk';\nexport default defineModule({ register: () => ({ start() { throw new Error('flaky fails'); } }) });\n",
  },
  'guard-child': {
    'module.toml': manifest({ name: 'guard-child', critical: true, depends: ['flaky'] }),
    'index.ts': "import { defineModule } from '@talon/module-sdk';\nexport default defineModule({});\n",
  },
  plain: {
    'module.toml': manifest({ name: 'plain' }),
    'index.ts':
      "import { defineModule } from '@talon/module-sdk';\nexport default defineModule({ register: () => ({ routes(app) { app.get('/api/plain', async () => ({ ok: true })); } }) });\n",
  },
});
after(() => mods.remove());

const boot = (only: string[] | undefined, config = '') => startTestKernel({ only, modulesDir: mods.root, config });

test('a security module that fails at boot stops start-up, naming it', async () => {
  await assert.rejects(
    boot(['failing-guard', 'plain']),
    (err: Error) => err instanceof BootAbort && /security module 'failing-guard' failed to start: guard cannot start/.test(err.message),
  );
});

test('a security module blocked by a failed dependency stops start-up too', async () => {
  await assert.rejects(boot(['guard-child', 'plain']), (err: Error) => err instanceof BootAbort && /'guard-child'/.test(err.message));
});

test('other modules follow [startup] on_boot_failure: continue (default) runs without them, abort stops', async () => {
  const k = await boot(['flaky', 'plain'], 'log_level = "info"\n');
  try {
    assert.equal(k.kernel.modules().find((m) => m.id === 'flaky')?.state, 'failed');
    assert.equal((await k.request('/api/plain')).status, 200);
    assert.equal(k.logLines().filter((l) => l.includes("module 'flaky' not started: flaky fails")).length, 1, 'one clear log line');
  } finally {
    await k.stop();
  }
  await assert.rejects(
    boot(['flaky', 'plain'], '[startup]\non_boot_failure = "abort"\n'),
    (err: Error) => err instanceof BootAbort && /on_boot_failure = "abort"/.test(err.message),
  );
});

test('a failed reload of a security module keeps its old version, never none', async () => {
  const k = await boot(['guard', 'plain']);
  try {
    mods.write('guard', 'index.ts', guardIndex({ startThrows: true, header: 'v2' }));
    const result = await k.kernel.reloadModule('guard');
    assert.equal(result.ok, false);
    await k.kernel.settled();
    assert.equal((await k.request('/api/plain')).headers.get('x-guard'), 'v1');
    mods.write('guard', 'migrations/0001_guard.sql', 'CREATE TABLE guard_seen (at TEXT);\n');
    mods.write('guard', 'migrations/postgres/0001_guard.sql', 'CREATE TABLE guard_seen (at TEXT);\n');
    mods.write('guard', 'index.ts', guardIndex({ header: 'v3' }));
    const migrating = await k.kernel.reloadModule('guard');
    assert.equal(migrating.ok, false, 'a security module does not take a new migration while running');
    assert.match(migrating.error!, /restart the service to apply it/);
    assert.equal((await k.request('/api/plain')).headers.get('x-guard'), 'v1');
  } finally {
    await k.stop();
    mods.write('guard', 'index.ts', guardIndex());
  }
});

test('disabling a security module is refused while its protection is configured, unless overridden', async () => {
  const disabled = (names: string[], extra = '') => `guard_key = "set"\n${extra}[modules]\ndisabled = ${JSON.stringify(names)}\n`;
  await assert.rejects(
    boot(undefined, disabled(['guard'])),
    (err: Error) => err instanceof ConfigError && /'guard', a security module, and while 'guard_key' is set/.test(err.message),
  );
  await assert.rejects(
    boot(undefined, disabled(['always-guard'])),
    (err: Error) => err instanceof ConfigError && /'always-guard'.*its protection is always on/.test(err.message),
  );
  for (const config of [
    disabled(['guard', 'failing-guard', 'guard-child']) + 'allow_disable_critical = ["guard", "failing-guard", "guard-child"]\n',
    `[modules]\ndisabled = ["guard", "failing-guard", "guard-child", "flaky"]\nallow_disable_critical = ["failing-guard", "guard-child"]\n`,
  ]) {
    const k = await boot(undefined, config);
    try {
      assert.equal(k.kernel.modules().find((m) => m.id === 'guard')?.state, 'disabled');
      assert.equal((await k.request('/api/plain')).status, 200);
    } finally {
      await k.stop();
    }
  }
});

test('a security module left out because a module it needs was disabled on purpose does not stop start-up', async () => {
  mods.write('guard-child', 'module.toml', manifest({ name: 'guard-child', critical: true, depends: ['plain'] }));
  try {
    const k = await boot(undefined, '[modules]\ndisabled = ["plain", "failing-guard", "flaky"]\nallow_disable_critical = ["failing-guard"]\n');
    try {
      assert.equal(k.kernel.modules().find((m) => m.id === 'guard-child')?.state, 'blocked');
    } finally {
      await k.stop();
    }
  } finally {
    mods.write('guard-child', 'module.toml', manifest({ name: 'guard-child', critical: true, depends: ['flaky'] }));
  }
});
