import { it } from 'node:test';
import assert from 'node:assert/strict';
import { limiter } from '../services/limit.ts';

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const signal = new AbortController().signal;

it('runs at most `slots` at once; the next in line starts when one ends, in order', async () => {
  const slot = limiter(() => 2);
  const started: number[] = [];
  const gates = [deferred(), deferred(), deferred(), deferred()];
  const runs = gates.map((gate, i) =>
    slot(signal, async () => {
      started.push(i);
      await gate.promise;
      return i;
    }),
  );
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(started, [0, 1], 'two run, two wait');
  gates[1].resolve();
  assert.equal(await runs[1], 1);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(started, [0, 1, 2]);
  gates[0].resolve();
  gates[2].resolve();
  gates[3].resolve();
  assert.deepEqual(await Promise.all(runs), [0, 1, 2, 3]);
  assert.deepEqual(started, [0, 1, 2, 3]);
});

it('a caller that gives up while waiting leaves the line and never runs; a failed run frees its slot', async () => {
  const slot = limiter(() => 1);
  const gate = deferred();
  const first = slot(signal, () => gate.promise);
  const controller = new AbortController();
  let ran = false;
  const second = slot(controller.signal, async () => void (ran = true));
  controller.abort(new Error('gave up'));
  await assert.rejects(second, /gave up/);
  gate.resolve();
  await first;
  assert.equal(ran, false);
  await assert.rejects(
    slot(signal, async () => {
      throw new Error('engine failed');
    }),
    /engine failed/,
  );
  assert.equal(await slot(signal, async () => 'free again'), 'free again');
});
