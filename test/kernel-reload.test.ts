import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestKernel, waitFor, type TestKernel } from '@talon/testing';

const extra = path.resolve('test/fixtures/extra');
const root = mkdtempSync(path.join(tmpdir(), 'talon-reload-'));
const dir = path.join(root, 'hello');
const routeFile = path.join(dir, 'routes', 'hello.ts');
cpSync(path.resolve('examples/hello-module'), dir, { recursive: true });
const original = readFileSync(routeFile, 'utf8');
// A slow route, to have requests in flight during a reload.
writeFileSync(
  routeFile,
  original.replace(
    'export function helloRoutes(app: Routes, ctx: ModuleContext<HelloConfig>, greetings: Greetings): void {',
    `export function helloRoutes(app: Routes, ctx: ModuleContext<HelloConfig>, greetings: Greetings): void {
  app.get('/api/hello-slow', async () => {
    await new Promise((r) => setTimeout(r, 400));
    return { slow: true };
  });`,
  ),
);

let k: TestKernel;
before(async () => {
  // Hot reload is a SQLite feature: on PostgreSQL (a fleet) --dev watches nothing (test/fleet-reload.test.ts).
  k = await startTestKernel({
    dev: true,
    database: 'sqlite',
    only: ['hello', 'body-echo'],
    config: `log_level = "info"\nmodule_paths = ["${root}", "${extra}"]\n`,
  });
});
after(async () => {
  await k.stop();
  rmSync(root, { recursive: true, force: true });
});

const greet = async () => ((await (await k.request('/api/hello/ann')).json()) as { message: string }).message;
const logs = () => k.logLines().join('');

test('a changed route file is picked up without a restart', async () => {
  assert.equal(await greet(), 'Hello, ann!');
  writeFileSync(
    routeFile,
    readFileSync(routeFile, 'utf8').replace('`${ctx.config.greeting}, ${request.params.name}!`', '`${ctx.config.greeting} there, ${request.params.name}!`'),
  );
  await waitFor(async () => (await greet()) === 'Hello there, ann!', 5_000, 'the changed route');
});

test('a second save soon after the first is served too (chokidar drops a change of the same file within 50 ms)', async () => {
  await k.kernel.settled();
  const good = readFileSync(routeFile, 'utf8');
  const say = (word: string) =>
    good.replace('`${ctx.config.greeting} there, ${request.params.name}!`', `\`\${ctx.config.greeting} ${word}, \${request.params.name}!\``);
  writeFileSync(routeFile, say('first'));
  // Late enough for the first reload to have read the file, inside chokidar's 50 ms throttle of the first change.
  await new Promise((r) => setTimeout(r, 40));
  writeFileSync(routeFile, say('second'));
  await waitFor(async () => (await greet()) === 'Hello second, ann!', 5_000, 'the second save to be served');
  writeFileSync(routeFile, good);
  await waitFor(async () => (await greet()) === 'Hello there, ann!', 5_000, 'the route as it was');
});

test('a broken change keeps the previous version serving and logs file and line', async () => {
  const good = readFileSync(routeFile, 'utf8');
  writeFileSync(routeFile, good.replace('app.get(', 'app.get(((('));
  // esbuild reads files in its own process: a reload already under way may read the file half-written and fail
  // otherwise first. The broken change itself must be reported with its file and line.
  const located = /reload failed; the previous version keeps serving: [^"]*routes[\\/]hello\.ts:\d+:\d+/;
  await waitFor(() => located.test(logs()), 5_000, 'the reload failure log line with file and line');
  assert.equal(await greet(), 'Hello there, ann!');
  assert.equal(k.kernel.modules().find((m) => m.id === 'hello')?.state, 'running');
  writeFileSync(routeFile, good);
});

test('in-flight requests complete across a reload, to the reloaded module and to others', async () => {
  await k.kernel.settled();
  const slow = k.request('/api/hello-slow');
  await new Promise((r) => setTimeout(r, 50));
  const reload = await k.kernel.reloadModule('hello');
  assert.ok(reload.ok, reload.error);
  const other = await k.request('/api/body-echo/quiet');
  assert.equal(other.status, 200);
  const res = await slow;
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { slow: true });
});

test('reloading the same module 100 times leaks nothing', async () => {
  const gc = (globalThis as { gc?: () => void }).gc;
  const hooks = k.kernel.hooks.kernel;
  const snapshot = () => ({
    responseTaps: hooks.http.response.taps.length,
    configTaps: hooks.config.changed.taps.length,
    timers: process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length,
    requestListeners: k.kernel['front'].server.listenerCount('request'),
    upgradeListeners: k.kernel['front'].server.listenerCount('upgrade'),
  });
  const settle = async () => {
    await k.kernel.settled();
    for (let i = 0; i < 3; i++) {
      gc?.();
      await new Promise((r) => setTimeout(r, 20));
    }
    return process.memoryUsage().heapUsed;
  };
  for (let i = 0; i < 10; i++) assert.ok((await k.kernel.reloadModule('hello')).ok);
  const heapBefore = await settle();
  const before = snapshot();
  for (let i = 0; i < 100; i++) {
    const r = await k.kernel.reloadModule('hello');
    assert.ok(r.ok, r.error);
  }
  const heapAfter = await settle();
  const after = snapshot();
  // Process-wide timers (keep-alive sockets, test helpers) may finish meanwhile: the count must not grow.
  assert.ok(after.timers <= before.timers, `timers grew from ${before.timers} to ${after.timers}`);
  assert.deepEqual({ ...after, timers: 0 }, { ...before, timers: 0 });
  assert.equal(await greet(), 'Hello there, ann!');
  if (gc) {
    const grownMb = (heapAfter - heapBefore) / 1024 / 1024;
    assert.ok(grownMb < 15, `heap grew ${grownMb.toFixed(1)} MB over 100 reloads`);
  }
});

test("a reloaded copy's route schemas are released with it (each copy validates with Ajv instances of its own)", async () => {
  const gc = (globalThis as { gc?: () => void }).gc;
  assert.ok(gc, 'the test runner exposes gc');
  const params = () => (k.kernel.routes().find((r) => r.url === '/api/hello/:name')?.schema as { params: object }).params;
  await greet(); // compiles this copy's params schema
  const first = new WeakRef(params());
  for (let i = 0; i < 3; i++) {
    assert.ok((await k.kernel.reloadModule('hello')).ok);
    assert.equal(await greet(), 'Hello there, ann!');
  }
  await k.kernel.settled();
  // No deref() before the last check: a WeakRef keeps what it hands out alive until the end of that job.
  for (let i = 0; i < 5; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(first.deref(), undefined, "the first copy's schema is still held after its copy was replaced");
});

test('the generation prepared after a reload never brings back a module removed meanwhile', async () => {
  const gone = path.join(root, 'gone');
  cpSync(path.resolve('test/fixtures/extra/slow'), gone, { recursive: true });
  writeFileSync(path.join(gone, 'module.toml'), 'name = "gone"\nversion = "1.0.0"\n');
  await waitFor(async () => (await k.request('/api/slow')).status === 200, 5_000, 'the added module to serve');
  // Dev mode: this reload prepares the next generation of everything but hello, 'gone' included.
  assert.ok((await k.kernel.reloadModule('hello')).ok);
  await k.kernel.settled();
  rmSync(gone, { recursive: true, force: true });
  await waitFor(async () => (await k.request('/api/slow')).status === 404, 5_000, 'the removed module to stop serving');
  assert.ok((await k.kernel.reloadModule('hello')).ok);
  assert.equal((await k.request('/api/slow')).status, 404);
  // A reload that uses a prepared generation keeps every other module's routes.
  assert.ok((await k.kernel.reloadModule('hello')).ok);
  assert.equal((await k.request('/api/body-echo/quiet')).status, 200);
  assert.equal(await greet(), 'Hello there, ann!');
});

test('a module folder added at run time is loaded; removing it unloads it', async () => {
  const extra = path.join(root, 'late');
  cpSync(path.resolve('test/fixtures/extra/slow'), extra, { recursive: true });
  writeFileSync(path.join(extra, 'module.toml'), 'name = "late"\nversion = "1.0.0"\n');
  await waitFor(async () => (await k.request('/api/slow')).status === 200, 5_000, 'the added module to serve');
  assert.equal(k.kernel.modules().find((m) => m.id === 'late')?.state, 'running');
  const said = k.logLines().map((l) => JSON.parse(l) as { module?: string; msg: string });
  assert.ok(
    said.some((l) => l.msg === "module 'late' loaded" && l.module === 'late'),
    'a first load says loaded, not reloaded',
  );
  rmSync(extra, { recursive: true, force: true });
  await waitFor(async () => (await k.request('/api/slow')).status === 404, 5_000, 'the removed module to stop serving');
  assert.equal(
    k.kernel.modules().find((m) => m.id === 'late'),
    undefined,
  );
  assert.equal((await k.request('/api/hello/x')).status, 200);
});
