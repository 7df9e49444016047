import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestKernel, waitFor, type TestKernel } from '@talon/module-sdk/testing';

// A third-party module (a copy of the hello example) with its own tsconfig, changed under `npm run dev`.
const root = mkdtempSync(path.join(tmpdir(), 'talon-typecheck-'));
const dir = path.join(root, 'hello');
cpSync(path.resolve('examples/hello-module'), dir, { recursive: true });

let k: TestKernel;
before(async () => {
  k = await startTestKernel({ dev: true, only: ['hello', 'dev-typecheck'], config: `log_level = "info"\nmodule_paths = ["${root}"]\n` });
});
after(async () => {
  await k.stop();
  rmSync(root, { recursive: true, force: true });
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
    const line = await waitFor(() => k.logLines().find((l) => l.includes('type error:') && l.includes('greetings.ts')), 60_000, 'the type error line');
    assert.match(line!, /greetings\.ts:\d+:\d+/);
    assert.match(line!, /not assignable to type 'number'/);
    assert.equal((await k.request('/api/hello/x')).status, 200);
  } finally {
    writeFileSync(service, good);
  }
});
