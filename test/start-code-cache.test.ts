import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const codeCache = pathToFileURL(path.resolve('scripts/code-cache.mjs')).href;

type Run = { stats: { hits: number; misses: number; rejected: number }; results: unknown[] };

/** A node process that compiles through the cache in `dir` and requires each of `files` there (their exports, or the error's message). */
function run(dir: string, files: string[], nodeArgs: string[] = []): Run {
  const script = `
    import { createRequire } from 'node:module';
    import { useCodeCache } from ${JSON.stringify(codeCache)};
    const cache = useCodeCache(${JSON.stringify(path.join(dir, 'cache.bin'))});
    const require = createRequire(${JSON.stringify(path.join(dir, 'x.js'))});
    const results = ${JSON.stringify(files)}.map((f) => { try { return require('./' + f); } catch (err) { return 'threw: ' + err.message; } });
    console.log(JSON.stringify({ stats: cache.stats(), results }));`;
  const out = execFileSync(process.execPath, [...nodeArgs, '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
  return JSON.parse(out) as Run;
}

function withDir(fn: (dir: string) => void): void {
  const dir = mkdtempSync(path.join(tmpdir(), 'talon-code-cache-'));
  try {
    fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a second run compiles from the cache written at the first exit, with the same results', () =>
  withDir((dir) => {
    writeFileSync(path.join(dir, 'a.js'), 'const twice = (n) => n * 2; module.exports = { value: twice(21), file: __filename === require.resolve("./a.js") };');
    writeFileSync(path.join(dir, 'b.js'), 'module.exports = require("./a.js").value + 1;');
    const first = run(dir, ['a.js', 'b.js']);
    assert.deepEqual(first.stats, { hits: 0, misses: 2, rejected: 0 });
    assert.ok(existsSync(path.join(dir, 'cache.bin')), 'written at exit');
    const second = run(dir, ['a.js', 'b.js']);
    assert.deepEqual(second.stats, { hits: 2, misses: 0, rejected: 0 });
    assert.deepEqual(second.results, first.results);
    assert.deepEqual(second.results, [{ value: 42, file: true }, 43]);
  }));

test('an edited file of the same length runs its new text, not the cached code', () =>
  withDir((dir) => {
    const file = path.join(dir, 'a.js');
    writeFileSync(file, 'module.exports = 111;');
    assert.deepEqual(run(dir, ['a.js']).results, [111]);
    writeFileSync(file, 'module.exports = 222;');
    const edited = run(dir, ['a.js']);
    assert.deepEqual(edited.results, [222]);
    assert.deepEqual(edited.stats, { hits: 0, misses: 1, rejected: 0 });
  }));

test('a damaged cache file is ignored; data made under other V8 flags is refused by V8 and made again', () =>
  withDir((dir) => {
    writeFileSync(path.join(dir, 'a.js'), 'module.exports = 1;');
    writeFileSync(path.join(dir, 'cache.bin'), 'not a cache');
    assert.deepEqual(run(dir, ['a.js']), { stats: { hits: 0, misses: 1, rejected: 0 }, results: [1] });
    // V8 checks its flags against the data's; a different flag set makes it refuse the data.
    assert.deepEqual(run(dir, ['a.js'], ['--no-lazy']).stats, { hits: 0, misses: 0, rejected: 1 });
  }));

test('what is not plain CommonJS goes the way Node takes it: its errors are Node’s, and a module that throws runs once', () =>
  withDir((dir) => {
    writeFileSync(path.join(dir, 'broken.js'), 'module.exports = (;');
    writeFileSync(path.join(dir, 'throws.js'), 'globalThis.runs = (globalThis.runs ?? 0) + 1; throw new Error("ran " + globalThis.runs);');
    const [broken, throws] = run(dir, ['broken.js', 'throws.js']).results as string[];
    assert.match(broken, /^threw: Unexpected token/);
    assert.equal(throws, 'threw: ran 1');
  }));

test('off when Node’s source maps are on (scripts compiled by vm are not source-mapped in Node 20)', () =>
  withDir((dir) => {
    writeFileSync(path.join(dir, 'a.js'), 'module.exports = 1;');
    const mapped = run(dir, ['a.js'], ['--enable-source-maps']);
    assert.equal(mapped.stats, undefined);
    assert.ok(!existsSync(path.join(dir, 'cache.bin')));
  }));

test('each set of Node flags has a cache file of its own, so runs with other flags do not replace each other’s', () => {
  const nameWith = (args: string[]) =>
    execFileSync(
      process.execPath,
      [...args, '--input-type=module', '-e', `import { codeCacheFile } from ${JSON.stringify(codeCache)}; console.log(codeCacheFile('/x'));`],
      {
        encoding: 'utf8',
      },
    ).trim();
  const plain = nameWith([]);
  assert.match(plain, /^\/x\/code-cache-[0-9a-f]{12}\.bin$/);
  assert.equal(nameWith([]), plain);
  assert.notEqual(nameWith(['--max-semi-space-size=2']), plain);
});
