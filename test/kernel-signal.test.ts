/**
 * A module copy's background work ends with the copy (issue 23, item 7): ctx.signal aborts when the copy retires, its
 * timers hand callbacks the signal, tracked work (ctx.track, run(), timer callbacks) is awaited (bounded) before the
 * successor's run() begins on a hot reload and before stop() completes.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestKernel } from '@talon/testing';
import { manifest, tempModules } from './support/temp-modules.ts';

type Event = { copy: number; what: string; at: number };
type Probe = { events: Event[]; copies: number };
const probe = () => (globalThis as { signalProbe?: Probe }).signalProbe!;

/** A poller as a module author writes it from docs/modules.md: a loop in run(), a sleep that listens to the signal. */
const poller = (version: string) => `import { defineModule } from '@talon/module-sdk';
const probe = (globalThis as { signalProbe?: { events: { copy: number; what: string; at: number }[]; copies: number } }).signalProbe!;
const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });
export default defineModule({
  register(ctx) {
    const copy = ++probe.copies;
    const log = (what: string) => probe.events.push({ copy, what, at: performance.now() });
    return {
      async run(signal) {
        log('run ${version}');
        while (!signal.aborted) {
          await sleep(10, signal);
          // A reply that takes a while to post: the copy waits for it before its successor begins.
          if (!signal.aborted) continue;
          await new Promise((r) => setTimeout(r, 80));
          log('posted last reply');
        }
        log('run ended');
      },
      stop() {
        log('stopped');
      },
      routes(app) {
        app.get('/api/poller/version', async () => ({ version: '${version}', aborted: ctx.signal.aborted }));
      },
    };
  },
});
`;

const mods = tempModules({ poller: { 'module.toml': manifest({ name: 'poller' }), 'index.ts': poller('1') } });
after(() => mods.remove());

test('on a hot reload the old copy’s run() ends, and its last tracked work settles, before the new copy’s run() begins', async () => {
  (globalThis as { signalProbe?: Probe }).signalProbe = { events: [], copies: 0 };
  const k = await startTestKernel({ only: ['poller'], config: `module_paths = ["${mods.root}"]\n` });
  try {
    mods.write('poller', 'index.ts', poller('2'));
    const outcome = await k.kernel.reloadModule('poller');
    assert.equal(outcome.ok, true, outcome.error);
    const res = await k.request('/api/poller/version');
    assert.deepEqual(await res.json(), { version: '2', aborted: false });
    // By the time the reload is done, the old copy's work is over, and it ended before the new copy's began.
    const events = probe().events.map((e) => `${e.copy}:${e.what}`);
    const [lastReply, ended, second] = ['1:posted last reply', '1:run ended', '2:run 2'].map((e) => events.indexOf(e));
    assert.ok(lastReply >= 0 && ended > lastReply && second > ended, `old copy's work ended before the new copy began: ${events.join(', ')}`);
  } finally {
    await k.stop();
  }
  const events = probe().events.map((e) => `${e.copy}:${e.what}`);
  const count = events.length;
  assert.ok(events.indexOf('2:run ended') < events.indexOf('2:stopped'), `run ended before stop(): ${events.join(', ')}`);
  await new Promise((r) => setTimeout(r, 150));
  assert.equal(probe().events.length, count, 'nothing happens after the module stopped');
});

const sleeper = `import { defineModule } from '@talon/module-sdk';
const probe = (globalThis as { signalProbe?: { events: { copy: number; what: string; at: number }[]; copies: number } }).signalProbe!;
export default defineModule({
  register(ctx) {
    const log = (what: string) => probe.events.push({ copy: 1, what, at: performance.now() });
    return {
      start() {
        ctx.setTimeout((signal) => {
          log(signal === ctx.signal ? 'timer got the signal' : 'timer got something else');
          // Work left to run whose failure nobody awaits: the kernel logs it.
          void ctx.track(Promise.reject(new Error('background upload failed')));
          // Work that ignores the signal: stop() waits for it, but not for ever.
          return ctx.track(new Promise((r) => setTimeout(r, 60_000).unref()));
        }, 1);
      },
      stop() {
        // A retired copy schedules nothing more.
        ctx.setTimeout(() => log('a timer of a retired copy fired'), 1);
        log('stopped');
      },
    };
  },
});
`;
const stubborn = tempModules({ sleeper: { 'module.toml': manifest({ name: 'sleeper' }), 'index.ts': sleeper } });
after(() => stubborn.remove());

test('stop() waits a bounded time for tracked work that ignores the signal, and says so; a rejected tracked promise is logged', async () => {
  (globalThis as { signalProbe?: Probe }).signalProbe = { events: [], copies: 0 };
  const k = await startTestKernel({ only: ['sleeper'], settleMs: 300, config: `log_level = "warn"\nmodule_paths = ["${stubborn.root}"]\n` });
  for (let i = 0; i < 100 && !probe().events.length; i++) await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(
    probe().events.map((e) => e.what),
    ['timer got the signal'],
  );
  const started = performance.now();
  await k.kernel.stop('test');
  assert.ok(performance.now() - started >= 300, 'stop waited for the tracked work');
  assert.match(k.logLines().join('\n'), /tracked work did not settle within 300 ms/);
  assert.match(k.logLines().join('\n'), /background upload failed[\s\S]*tracked work failed|tracked work failed[\s\S]*background upload failed/);
  assert.equal(k.logLines().filter((l) => l.includes('did not settle')).length, 1, 'the copy waited once, not at each step of the stop');
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(probe().events.at(-1)?.what, 'stopped');
  await k.stop();
});
