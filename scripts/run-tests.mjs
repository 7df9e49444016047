#!/usr/bin/env node
// Runs every *.test.ts under test/, modules/ and examples/ with Node's test runner (tsx for TypeScript).
// `npm test -- <path or substring>...` runs only the matching files.
// A folder with its own package.json (examples/slug-module) is a separate package: it installs its own
// dependencies and runs its own tests from its folder (.ci/run does), so it is skipped here.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const roots = ['test', 'modules', 'examples'];
const filters = process.argv.slice(2);
const files = [];
const walk = (dir) => {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const p = path.join(dir, name);
    if (!statSync(p).isDirectory()) {
      if (name.endsWith('.test.ts')) files.push(p);
    } else if (!existsSync(path.join(p, 'package.json'))) walk(p);
  }
};
for (const r of roots) {
  try {
    walk(r);
  } catch {
    // a root may not exist yet
  }
}
const chosen = filters.length ? files.filter((f) => filters.some((x) => f.includes(x))) : files;
if (!chosen.length) {
  console.error('no test files matched');
  process.exit(1);
}
const result = spawnSync(process.execPath, ['--import', 'tsx', '--expose-gc', '--test', '--test-concurrency=2', '--test-reporter=spec', ...chosen.sort()], {
  stdio: 'inherit',
  env: { ...process.env, NODE_ENV: 'test' },
});
process.exit(result.status ?? 1);
