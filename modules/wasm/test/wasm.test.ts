import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestKernel, type TestKernel } from '@talon/testing';
import type { WasmCall, WasmResult, WasmRuntime } from '@talon/wasm';

const TEXT_STATS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../skills/bundled/text-stats/text_stats.wat');
const dir = mkdtempSync(path.join(tmpdir(), 'wasm-test-'));
/** A guest with the ABI around a body that runs inside execute (returns the empty JSON object "{}" at 0). */
const guest = (name: string, body: string, extra = '') => {
  const file = path.join(dir, `${name}.wat`);
  writeFileSync(
    file,
    `(module
      (import "talon" "host_call" (func $host_call (param i32 i32) (result i64)))
      (memory (export "memory") 1)
      (data (i32.const 0) "{}")
      (global $heap (mut i32) (i32.const 1024))
      (func (export "alloc") (param $n i32) (result i32) (local $p i32)
        (local.set $p (global.get $heap)) (global.set $heap (i32.add (global.get $heap) (local.get $n))) (local.get $p))
      ${extra}
      (func (export "execute") (param $ptr i32) (param $len i32) (result i64) ${body}))`,
  );
  return file;
};

let k: TestKernel;
let rt: WasmRuntime;
before(async () => {
  k = await startTestKernel({ only: ['wasm'], config: '[wasm]\nfuel = 100000000000\ntimeout_ms = 5000\nmemory_mb = 2\n' });
  rt = k.kernel.services.view('wasm.runtime') as WasmRuntime;
});
after(() => k?.stop());

const run = (modulePath: string, extra: Partial<WasmCall> = {}): Promise<WasmResult> =>
  rt.run({ modulePath, tool: 't', input: {}, capabilities: [], ...extra });

test('the example skill compiles from WAT and answers; fuel used is counted', async () => {
  const r = await rt.run({ modulePath: TEXT_STATS, tool: 'text_stats', input: { text: 'two words\nand more' }, capabilities: [] });
  assert.ok(r.ok, JSON.stringify(r));
  assert.deepEqual(r.output, { bytes: 18, words: 4, lines: 2 });
  assert.ok(r.fuelUsed > 0);
});

test('fuel: an endless loop stops with a fuel error, never a hang; a smaller budget stops sooner', async () => {
  const spin = guest('spin', '(loop $l (br $l)) (i64.const 2)');
  const r = await run(spin, { fuel: 5000000 });
  assert.equal(r.ok, false);
  assert.equal(!r.ok && r.kind, 'fuel');
  assert.match(!r.ok ? r.error : '', /fuel exhausted/);
  const small = await run(spin, { fuel: 10000 });
  assert.ok(!small.ok && small.kind === 'fuel' && small.ms < r.ms + 1000);
  // A loop that ends within the budget: fuel used grows with the iterations it ran.
  const count = (n: number) =>
    guest(
      `count${n}`,
      `(local $i i32) (loop $l (local.set $i (i32.add (local.get $i) (i32.const 1))) (br_if $l (i32.lt_u (local.get $i) (i32.const ${n})))) (i64.const 2)`,
    );
  const a = await run(count(100));
  const b = await run(count(10000));
  assert.ok(a.ok && b.ok && b.fuelUsed > a.fuelUsed * 50, `${a.ok && a.fuelUsed} vs ${b.ok && b.fuelUsed}`);
});

test('epoch: a call that outlives the deadline is terminated (fuel left), and the next call still works', async () => {
  const slow = guest('slow', '(loop $l (br $l)) (i64.const 2)');
  const started = Date.now();
  const r = await run(slow, { timeoutMs: 50 });
  assert.equal(!r.ok && r.kind, 'epoch');
  assert.ok(Date.now() - started < 1500);
  const after = await rt.run({ modulePath: TEXT_STATS, tool: 'text_stats', input: { text: 'x' }, capabilities: [] });
  assert.ok(after.ok);
});

test('memory: growth past the cap fails in the guest; a module needing more at start is refused', async () => {
  const grow = guest('grow', '(if (i32.eq (memory.grow (i32.const 100)) (i32.const -1)) (then unreachable)) (i64.const 2)');
  const r = await run(grow);
  assert.equal(r.ok, false);
  const big = path.join(dir, 'big.wat');
  writeFileSync(
    big,
    '(module (memory (export "memory") 64) (func (export "alloc") (param i32) (result i32) (i32.const 0)) (func (export "execute") (param i32 i32) (result i64) (i64.const 0)))',
  );
  const refused = await run(big);
  assert.equal(!refused.ok && refused.kind, 'invalid');
  assert.match(!refused.ok ? refused.error : '', /more than the cap/);
});

test('host calls answer only the declared capabilities', async () => {
  const extra = '(data (i32.const 100) "{\\"method\\":\\"time_now\\"}")';
  // The host's answer becomes the tool's result: execute returns what host_call returned.
  const caller = guest('caller', '(call $host_call (i32.const 100) (i32.const 21))', extra);
  const denied = await run(caller);
  assert.ok(denied.ok);
  assert.match(JSON.stringify(denied.output), /capability 'time' is not granted/);
  const granted = await run(caller, { capabilities: ['time'] });
  assert.ok(granted.ok && typeof (granted.output as { ok: number }).ok === 'number');
});

test('a module that does not parse is refused with the reason', async () => {
  const bad = path.join(dir, 'bad.wat');
  writeFileSync(bad, '(module (func');
  const r = await run(bad);
  assert.equal(!r.ok && r.kind, 'invalid');
});
