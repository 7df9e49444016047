import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, realpathSync, symlinkSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pino from 'pino';
import { AsyncSeriesBailHook, AsyncSeriesHook, AsyncSeriesWaterfallHook, SyncHook, SyncWaterfallHook } from '@talon/module-sdk';
import { safeJoin, readPage, readLimit, cappedLimitProperty, paginate, HttpError, requireUuid, lazy, lazyRequire } from '@talon/module-sdk';
import Fastify from 'fastify';
import type { Routes } from '@talon/module-sdk';
import { TapLedger } from '../kernel/hooks.ts';
import { ServiceRegistry } from '../kernel/services.ts';

test('safeJoin keeps paths inside the root', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'talon-safe-'));
  const outside = mkdtempSync(path.join(tmpdir(), 'talon-outside-'));
  try {
    mkdirSync(path.join(root, 'sub'));
    writeFileSync(path.join(outside, 'secret.txt'), 'x');
    symlinkSync(outside, path.join(root, 'escape'));
    symlinkSync(path.join(root, 'sub'), path.join(root, 'inner'));
    assert.equal(safeJoin(root, 'sub/new.txt'), path.join(realRoot(root), 'sub', 'new.txt'));
    assert.equal(safeJoin(root, 'inner/file'), path.join(realRoot(root), 'inner', 'file'));
    for (const bad of ['../x', 'sub/../../x', '/etc/passwd', 'escape/secret.txt', 'escape', 'a\0b', '']) {
      assert.throws(
        () => safeJoin(root, bad),
        (err: HttpError) => err.statusCode === 400,
        `'${bad}' must be refused`,
      );
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  }
});

function realRoot(p: string): string {
  return realpathSync(p);
}

test('pagination clamps the limit and slices', () => {
  assert.deepEqual(readPage({}, { limit: 10, max: 100 }), { limit: 10, offset: 0 });
  assert.deepEqual(readPage({ limit: 1000, offset: 5 }, { limit: 10, max: 100 }), { limit: 100, offset: 5 });
  assert.deepEqual(paginate([1, 2, 3, 4], { limit: 2, offset: 1 }), { items: [2, 3], total: 4, offset: 1, limit: 2 });
});

test('a capped limit: the default when absent, clamped to the cap above it, and a schema that says both', () => {
  const size = { limit: 50, max: 500 };
  assert.equal(readLimit(undefined, size), 50);
  assert.equal(readLimit(1000, size), 500);
  assert.equal(readLimit(500, size), 500);
  assert.equal(readLimit(3, size), 3);
  const schema = cappedLimitProperty(size, 'entries');
  assert.equal(schema.type, 'integer');
  assert.equal(schema.minimum, 1);
  assert.equal('maximum' in schema, false, 'a maximum would refuse instead of capping');
  assert.match(schema.description, /default 50, at most 500/);
});

test('requireUuid refuses non-UUIDs with 400 naming the field', () => {
  assert.equal(requireUuid('3f2504e0-4f89-11d3-9a0c-0305e82c3301', 'agent id'), '3f2504e0-4f89-11d3-9a0c-0305e82c3301');
  assert.throws(
    () => requireUuid('nope', 'agent id'),
    (err: HttpError) => err.statusCode === 400 && /agent id/.test(err.message),
  );
});

test('tap facades name taps after the module, stage them until commit, isolate failures and remove their taps', async () => {
  const log = pino({ level: 'silent' });
  const catalogue = { seen: new SyncHook<[string]>(['x']), shape: new AsyncSeriesWaterfallHook<[string]>(['s']) };
  const a = new TapLedger('a#1', log);
  const b = new TapLedger('b#2', log);
  const calls: string[] = [];
  a.facade(catalogue).seen.tap('one', (x) => void calls.push(`a:${x}`));
  b.facade(catalogue).seen.tap('two', (x) => void calls.push(`b:${x}`));
  catalogue.seen.call('0');
  assert.deepEqual(calls, [], 'staged taps are not active before commit');
  a.commit();
  b.commit();
  catalogue.seen.call('1');
  assert.deepEqual(calls, ['a:1', 'b:1']);
  a.removeAll();
  catalogue.seen.call('2');
  assert.deepEqual(calls, ['a:1', 'b:1', 'b:2']);
  assert.deepEqual(
    catalogue.seen.taps.map((t) => t.name),
    ['b#2:two'],
  );
});

test('a failing waterfall tap is skipped: the next tap gets the value from before it', async () => {
  const errors: string[] = [];
  const log = pino({ level: 'error' }, { write: (line: string) => void errors.push(line) });
  const sync = new SyncWaterfallHook<[number]>(['n']);
  const async = new AsyncSeriesWaterfallHook<[number]>(['n']);
  const ledger = new TapLedger('m#1', log);
  const facade = ledger.facade({ sync, async });
  facade.sync.tap('double', (n) => n * 2);
  facade.sync.tap('boom', () => {
    throw new Error('sync tap failure');
  });
  facade.sync.tap('plus-one', (n) => n + 1);
  facade.async.tapPromise('double', async (n) => n * 2);
  facade.async.tapPromise('boom', async () => {
    throw new Error('async tap failure');
  });
  facade.async.tap('throws-sync', () => {
    throw new Error('sync throw in an async hook');
  });
  facade.async.tapPromise('plus-one', async (n) => n + 1);
  ledger.commit();
  assert.equal(sync.call(5), 11);
  assert.equal(await async.promise(5), 11);
  assert.equal(errors.length, 3, 'each failure is logged');
  assert.match(errors.join(''), /"tap":"boom"/);
});

test('a bail hook asks the next tap when one fails', async () => {
  const bail = new AsyncSeriesBailHook<[string], string | undefined>(['q']);
  const ledger = new TapLedger('m#1', pino({ level: 'silent' }));
  const facade = ledger.facade({ bail });
  facade.bail.tapPromise('boom', async () => {
    throw new Error('x');
  });
  facade.bail.tapPromise('answer', async (q) => `answer to ${q}`);
  ledger.commit();
  assert.equal(await bail.promise('q'), 'answer to q');
});

test('service views reach the instance that is published, and stop when it is unpublished', () => {
  const reg = new ServiceRegistry();
  const provider = (id: string, value: object) => ({ id, service: () => value });
  const v1 = provider('t', { hello: () => 'v1' });
  const v2 = provider('t', { hello: () => 'v2' });
  const view = reg.view<{ hello(): string }>('t.svc');
  assert.throws(() => view.hello(), /not available/);
  reg.publish(v1, ['t.svc']);
  assert.equal(view.hello(), 'v1');
  reg.publish(v2, ['t.svc']);
  assert.equal(view.hello(), 'v2');
  reg.unpublish(v1);
  assert.equal(view.hello(), 'v2', 'unpublishing the old copy keeps the newer entry');
  assert.throws(() => Object.assign(view, { hello: () => 'mine' }), /used through its methods; 'hello' cannot be changed/);
  assert.equal(view.hello(), 'v2');
  reg.publish(provider('t', {}), []);
  assert.throws(() => view.hello(), /not available/, 'a new copy that no longer provides the service takes it away');
});

test('requireUuid hands back the lowercase form', () => {
  assert.equal(requireUuid('3F2504E0-4F89-11D3-9A0C-0305E82C3301', 'agent id'), '3f2504e0-4f89-11d3-9a0c-0305e82c3301');
});

test('tapPromise on a synchronous hook does not compile', () => {
  const ledger = new TapLedger('m#1', pino({ level: 'silent' }));
  const facade = ledger.facade({ sync: new SyncHook<[string]>(['x']), async: new AsyncSeriesHook<[string]>(['x']) });
  // @ts-expect-error a synchronous hook has no tapPromise (npm run typecheck fails if this line compiles)
  assert.equal(typeof facade.sync.tapPromise, 'undefined');
  assert.equal(typeof facade.async.tapPromise, 'function');
});

test('a response schema types the reply: a value typed by an interface fits, a wrong property type does not compile', () => {
  interface Greeting {
    text: string;
    internal: number;
  }
  const greeting = (): Greeting => ({ text: 'hi', internal: 7 });
  const schema = { response: { 200: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } } } as const;
  const routes = Fastify() as unknown as Routes;
  // Before Sent<>, this line was a 20-line TS2769 about `websocket` (npm run typecheck fails if it stops compiling).
  routes.get('/greeting', { schema }, async () => greeting());
  // @ts-expect-error the schema says text is a string (npm run typecheck fails if this line compiles)
  routes.get('/wrong', { schema }, async () => ({ text: 3 }));
  assert.equal(routes.hasRoute({ method: 'GET', url: '/greeting' }), true);
});

test('lazyRequire loads on the first call, from the module first, then from the service, and keeps the package', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'talon-lazy-'));
  try {
    mkdirSync(path.join(dir, 'node_modules', 'own-pkg'), { recursive: true });
    writeFileSync(
      path.join(dir, 'node_modules', 'own-pkg', 'index.js'),
      'globalThis.__talonLazyLoads = (globalThis.__talonLazyLoads ?? 0) + 1; module.exports = { who: "own" };',
    );
    const from = pathToFileURL(path.join(dir, 'index.js')).href;
    const own = lazyRequire<{ who: string }>(from, 'own-pkg');
    const loads = () => (globalThis as { __talonLazyLoads?: number }).__talonLazyLoads ?? 0;
    assert.equal(loads(), 0, 'nothing is loaded before the first call');
    assert.equal(own().who, 'own');
    assert.equal(own().who, 'own');
    assert.equal(loads(), 1, 'loaded once');
    // Not beside the module: found among the service's packages.
    const serviceOnly = lazyRequire<{ parse(text: string): unknown }>(from, 'smol-toml');
    assert.equal((serviceOnly().parse('a = 1') as { a: number }).a, 1);
    assert.throws(() => lazyRequire(from, 'no-such-package-anywhere')(), /Cannot find module/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('lazy: the value is made on the first call only, and kept (also when it is undefined)', () => {
  let made = 0;
  const value = lazy(() => {
    made++;
    return made === 1 ? undefined : 'again';
  });
  assert.equal(made, 0, 'nothing is made before the first call');
  assert.equal(value(), undefined);
  assert.equal(value(), undefined);
  assert.equal(made, 1);
});
