/**
 * What a module copy holds is released when it stops (kernel/loader/instance.ts): its timers are cleared, a failing
 * timer callback is logged (and the timer goes on), onStop handlers run in reverse order, and ctx.dataDir is made only
 * when a module reads it.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { startTestKernel } from '@talon/testing';
import { manifest, tempModules } from './support/temp-modules.ts';

type Probe = { ticks: number; stopped: string[]; dataDir?: string };
const probe = () => (globalThis as { probe?: Probe }).probe!;

const mods = tempModules({
  holder: {
    'module.toml': manifest({ name: 'holder' }),
    'index.ts': `import { defineModule } from '@talon/module-sdk';
const probe = (globalThis as { probe?: { ticks: number; stopped: string[]; dataDir?: string } }).probe!;
export default defineModule({
  register(ctx) {
    ctx.onStop(() => void probe.stopped.push('first'));
    ctx.onStop(() => void probe.stopped.push('second'));
    return {
      start() {
        ctx.setInterval(() => {
          probe.ticks++;
          if (probe.ticks === 1) throw new Error('tick exploded');
        }, 5);
        ctx.setTimeout(() => Promise.reject(new Error('late rejection')), 5);
        ctx.setTimeout(() => void probe.stopped.push('never'), 60_000);
      },
      routes(app) {
        app.get('/api/holder/data', async () => ({ dir: (probe.dataDir = ctx.dataDir) }));
      },
    };
  },
});
`,
  },
});
after(() => mods.remove());

const waitFor = async (done: () => boolean, what: string) => {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(done(), `timed out waiting for ${what}`);
};

test('a stopped module copy leaves no timer running, its onStop handlers ran last-first, failing callbacks were logged', async () => {
  (globalThis as { probe?: Probe }).probe = { ticks: 0, stopped: [] };
  const k = await startTestKernel({ only: ['holder'], config: `log_level = "info"\nmodule_paths = ["${mods.root}"]\n` });
  try {
    await waitFor(() => probe().ticks >= 3, 'the interval to tick three times');
    const logged = () => k.logLines().join('\n');
    await waitFor(() => logged().includes('late rejection'), 'the rejected timeout to be logged');
    assert.match(logged(), /timer callback failed[\s\S]*tick exploded|tick exploded[\s\S]*timer callback failed/);

    const dataDir = path.join(k.home, 'data', 'holder');
    assert.equal(existsSync(dataDir), false, 'no data folder before the module asks for one');
    const res = await k.request('/api/holder/data');
    assert.deepEqual(await res.json(), { dir: dataDir });
    assert.equal(existsSync(dataDir), true);
  } finally {
    await k.stop();
  }
  assert.deepEqual(probe().stopped, ['second', 'first']);
  const ticks = probe().ticks;
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(probe().ticks, ticks, 'the interval stopped with the module');
});
