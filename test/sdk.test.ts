import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, realpathSync, symlinkSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { AsyncSeriesWaterfallHook, SyncHook } from 'tapable';
import { safeJoin, readPage, paginate, HttpError, requireUuid, serviceRef } from '@talon/module-sdk';
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

test('requireUuid refuses non-UUIDs with 400 naming the field', () => {
  assert.equal(requireUuid('3f2504e0-4f89-11d3-9a0c-0305e82c3301', 'agent id'), '3f2504e0-4f89-11d3-9a0c-0305e82c3301');
  assert.throws(
    () => requireUuid('nope', 'agent id'),
    (err: HttpError) => err.statusCode === 400 && /agent id/.test(err.message),
  );
});

test('tap facades name taps after the module, isolate failures and remove their taps', async () => {
  const log = pino({ level: 'silent' });
  const catalogue = { seen: new SyncHook<[string]>(['x']), shape: new AsyncSeriesWaterfallHook<[string]>(['s']) };
  const a = new TapLedger('a#1', log);
  const b = new TapLedger('b#2', log);
  const calls: string[] = [];
  a.facade(catalogue).seen.tap('one', (x) => void calls.push(`a:${x}`));
  a.facade(catalogue).shape.tapPromise('boom', async () => {
    throw new Error('tap failure');
  });
  b.facade(catalogue).seen.tap('two', (x) => void calls.push(`b:${x}`));
  b.facade(catalogue).shape.tapPromise('up', async (s) => s.toUpperCase());
  catalogue.seen.call('1');
  assert.deepEqual(calls, ['a:1', 'b:1']);
  assert.equal(await catalogue.shape.promise('x'), 'X', 'a failing waterfall tap passes its input on');
  a.removeAll();
  catalogue.seen.call('2');
  assert.deepEqual(calls, ['a:1', 'b:1', 'b:2']);
  assert.deepEqual(
    catalogue.seen.taps.map((t) => t.name),
    ['b#2:two'],
  );
});

test('service views always reach the current provider instance', () => {
  const reg = new ServiceRegistry();
  const ref = serviceRef<{ hello(): string }>('t.svc');
  reg.provide(ref, 1, { hello: () => 'v1' });
  const view = reg.view<{ hello(): string }>(ref.id);
  assert.equal(view.hello(), 'v1');
  reg.provide(ref, 2, { hello: () => 'v2' });
  assert.equal(view.hello(), 'v2');
  return reg.release(1).then(() => {
    assert.equal(view.hello(), 'v2', 'releasing the old owner keeps the newer entry');
    return reg.release(2).then(() => assert.throws(() => view.hello(), /not available/));
  });
});
