import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startTestKernel } from '@talon/testing';
import { manifest, tempModules } from './support/temp-modules.ts';

const fixtures = path.resolve('test/fixtures/modules');
const contract = "import { serviceRef } from '@talon/module-sdk';\nexport const store = serviceRef<{ get(): string }>('store.kv');\n";
const provider = `import { defineModule } from '@talon/module-sdk';
import { store } from '@talon/store';
export default defineModule({
  register(ctx) {
    ctx.provide(store, { get: () => 'stored' }, () => void (globalThis as { disposed?: string[] }).disposed!.push(ctx.id));
  },
});
`;
const mods = tempModules({
  store: { 'module.toml': manifest({ name: 'store', provides: ['store.kv'] }), 'api.ts': contract, 'index.ts': provider },
  // Declares the store through consumes, uses it through the contract and through its container.
  reader: {
    'module.toml': manifest({ name: 'reader', consumes: ['store.kv'] }),
    'index.ts': `import { defineModule } from '@talon/module-sdk';
import { store } from '@talon/store';
export default defineModule({
  register(ctx) {
    const kv = ctx.use(store);
    const fromContainer = ctx.container.resolve<{ get(): string }>('store.kv');
    return { routes(app) { app.get('/api/reader', async () => ({ got: kv.get(), container: fromContainer.get() })); } };
  },
});
`,
  },
  // Imports the contract without declaring the store.
  sneaky: {
    'module.toml': manifest({ name: 'sneaky' }),
    'index.ts': `import { defineModule } from '@talon/module-sdk';
import { store } from '@talon/store';
export default defineModule({ register(ctx) { ctx.use(store); } });
`,
  },
  // Builds the ref itself to dodge the import check: the use is still undeclared.
  dodger: {
    'module.toml': manifest({ name: 'dodger' }),
    'index.ts': `import { defineModule, serviceRef } from '@talon/module-sdk';
export default defineModule({ register(ctx) { ctx.use(serviceRef<object>('store.kv')); } });
`,
  },
  unlisted: {
    'module.toml': manifest({ name: 'unlisted' }),
    'index.ts': `import { defineModule, serviceRef } from '@talon/module-sdk';
export default defineModule({ register(ctx) { ctx.provide(serviceRef<object>('unlisted.thing'), {}); } });
`,
  },
  promised: {
    'module.toml': manifest({ name: 'promised', provides: ['promised.thing'] }),
    'index.ts': `import { defineModule } from '@talon/module-sdk';
export default defineModule({ register() {} });
`,
  },
  // A contract with logic in it.
  leaky: {
    'module.toml': manifest({ name: 'leaky' }),
    'api.ts': 'export function helper(): number { return 1; }\n',
    'index.ts': `import { defineModule } from '@talon/module-sdk';
export default defineModule({});
`,
  },
  'leaky-user': {
    'module.toml': manifest({ name: 'leaky-user', depends: ['leaky'] }),
    'index.ts': `import { defineModule } from '@talon/module-sdk';
import { helper } from '@talon/leaky';
export default defineModule({ register() { helper(); } });
`,
  },
  future: {
    'module.toml': manifest({ name: 'future', sdk: '^9.0.0' }),
    'index.ts': "import { defineModule } from '@talon/module-sdk';\nexport default defineModule({});\n",
  },
  // Bare imports: its own package first (node_modules beside it), then the service's (picomatch).
  packaged: {
    'module.toml': manifest({ name: 'packaged' }),
    'node_modules/tiny-own/package.json': '{ "name": "tiny-own", "version": "1.0.0", "main": "index.js" }',
    'node_modules/tiny-own/index.js': "module.exports = { answer: () => 'own package' };\n",
    'index.ts': `import { defineModule } from '@talon/module-sdk';
import { answer } from 'tiny-own';
import picomatch from 'picomatch';
export default defineModule({
  register: () => ({ routes(app) { app.get('/api/packaged', async () => ({ own: answer(), service: picomatch.isMatch('a.ts', '*.ts') })); } }),
});
`,
  },
});
after(() => mods.remove());

const boot = (only: string[]) => {
  (globalThis as { disposed?: string[] }).disposed = [];
  return startTestKernel({ only, config: `module_paths = ["${mods.root}"]\n` });
};
const state = (k: Awaited<ReturnType<typeof boot>>, id: string) => k.kernel.modules().find((m) => m.id === id)!;

test('a declared connection reaches the service through ctx.use and through the module container', async () => {
  const k = await boot(['store', 'reader']);
  try {
    assert.deepEqual(await (await k.request('/api/reader')).json(), { got: 'stored', container: 'stored' });
  } finally {
    await k.stop();
  }
});

test('undeclared uses fail the module, naming both modules and the manifest to fix', async () => {
  const k = await boot(['store', 'sneaky', 'dodger']);
  try {
    assert.equal(state(k, 'sneaky').state, 'failed');
    assert.match(
      state(k, 'sneaky').error!,
      /module 'sneaky' imports @talon\/store without declaring it: add 'store' to depends, optional_depends or consumes in .*sneaky[\\/]module\.toml/,
    );
    assert.equal(state(k, 'dodger').state, 'failed');
    assert.match(state(k, 'dodger').error!, /module 'dodger' uses service 'store.kv' of module 'store' without declaring it/);
    assert.equal(state(k, 'store').state, 'running', 'the provider is not affected');
  } finally {
    await k.stop();
  }
});

test('what a module provides must match its manifest', async () => {
  const k = await boot(['unlisted', 'promised']);
  try {
    assert.match(state(k, 'unlisted').error!, /provides 'unlisted.thing', which its module.toml does not list in provides/);
    assert.match(state(k, 'promised').error!, /lists provides 'promised.thing', but register\(\) did not provide it/);
  } finally {
    await k.stop();
  }
});

test('a contract that exports logic is refused, naming the export', async () => {
  const k = await boot(['leaky', 'leaky-user']);
  try {
    assert.equal(state(k, 'leaky-user').state, 'failed');
    assert.match(state(k, 'leaky-user').error!, /leaky[\\/]api\.ts: export 'helper' is not a type, service ref, hook or event catalogue/);
  } finally {
    await k.stop();
  }
});

test('a module written for another SDK major is refused with both versions', async () => {
  const k = await boot(['future']);
  try {
    assert.match(state(k, 'future').error!, /needs @talon\/module-sdk \^9\.0\.0; this service has 0\.2\.\d+/);
  } finally {
    await k.stop();
  }
});

test("a third-party module's bare imports resolve from its own node_modules, then the service's", async () => {
  const k = await boot(['packaged']);
  try {
    assert.equal(state(k, 'packaged').state, 'running', state(k, 'packaged').error);
    assert.deepEqual(await (await k.request('/api/packaged')).json(), { own: 'own package', service: true });
  } finally {
    await k.stop();
  }
});

test('the disposers of provided services run when a copy stops: on reload and at shutdown', async () => {
  const k = await boot(['store']);
  const disposed = () => (globalThis as { disposed?: string[] }).disposed ?? [];
  try {
    assert.ok((await k.kernel.reloadModule('store')).ok);
    await k.kernel.settled();
    assert.deepEqual(disposed(), ['store'], 'the replaced copy disposed its service');
  } finally {
    await k.stop();
  }
  assert.deepEqual(disposed(), ['store', 'store']);
});

test('a service view follows the provider across its reloads', async () => {
  const k = await startTestKernel({ modulesDir: fixtures, only: ['alpha', 'beta'] });
  try {
    assert.deepEqual(await (await k.request('/api/beta')).json(), { n: 1 });
    assert.ok((await k.kernel.reloadModule('alpha')).ok);
    assert.deepEqual(await (await k.request('/api/beta')).json(), { n: 1 }, 'the new alpha copy counts from its own state');
  } finally {
    await k.stop();
  }
});
