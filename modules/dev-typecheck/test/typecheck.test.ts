import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestKernel, waitFor, type TestKernel } from '@talon/testing';

// A third-party module (a copy of the hello example) with its own tsconfig, changed under `npm run dev`.
const root = mkdtempSync(path.join(tmpdir(), 'talon-typecheck-'));
const dir = path.join(root, 'hello');
cpSync(path.resolve('examples/hello-module'), dir, { recursive: true });

let k: TestKernel;
before(async () => {
  // Hot reload is a SQLite feature: on PostgreSQL (a fleet) --dev watches nothing (test/fleet-reload.test.ts).
  k = await startTestKernel({ dev: true, database: 'sqlite', only: ['hello', 'dev-typecheck'], config: `log_level = "info"\nmodule_paths = ["${root}"]\n` });
});
after(async () => {
  await k.stop();
  rmSync(root, { recursive: true, force: true });
});

test('a module outside the service without a tsconfig.json is not type-checked, which is said once', async () => {
  const service = path.join(dir, 'services', 'greetings.ts');
  const good = readFileSync(service, 'utf8');
  const skipped = () => k.logLines().filter((l) => l.includes('type check skipped')).length;
  for (const [i, expected] of [1, 1].entries()) {
    const reloads = k.kernel.reloadCount();
    writeFileSync(service, `${good}\n// change ${i}\n`);
    await waitFor(() => k.kernel.reloadCount() > reloads, 20_000, 'the reload');
    await waitFor(() => skipped() === expected || undefined, 5_000, 'the skip line');
  }
  assert.ok(!k.logLines().some((l) => l.includes('type check passed') || l.includes('type error:')), 'no checker ran');
  writeFileSync(service, good);
});

test('in dev mode a type error is logged with file and line, while the change still reloads', async () => {
  // The module's own tsconfig (the documented recipe for a module outside the repository).
  const sdk = path.resolve('module-sdk/src/index.ts');
  writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noEmit: true,
        allowImportingTsExtensions: true,
        skipLibCheck: true,
        types: ['node'],
        typeRoots: [path.resolve('node_modules/@types')],
        paths: { '@talon/module-sdk': [sdk] },
      },
      include: ['**/*.ts'],
    }),
  );
  const service = path.join(dir, 'services', 'greetings.ts');
  const good = readFileSync(service, 'utf8');
  writeFileSync(service, `${good}\nexport const wrong: number = 'not a number';\n`);
  try {
    // The checker runs at low CPU priority: on a busy machine (the whole suite at once) it waits for the CPU.
    const line = await waitFor(() => k.logLines().find((l) => l.includes('type error:') && l.includes('greetings.ts')), 120_000, 'the type error line');
    assert.match(line!, /greetings\.ts:\d+:\d+/);
    assert.match(line!, /not assignable to type 'number'/);
    assert.equal((await k.request('/api/hello/x')).status, 200);
  } finally {
    writeFileSync(service, good);
  }
});
