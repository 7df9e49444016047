/**
 * Every capability is a module that can be switched off while the service keeps running: the service
 * starts with each built-in module disabled in turn, serves, and stops only what hard-depends on it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'smol-toml';
import { startTestKernel } from '@talon/testing';

interface Manifest {
  name: string;
  depends: string[];
  critical: boolean;
  enabled: boolean;
}

/** The module that serves GET /api/health. */
const HEALTH_OWNER = 'system';
const modulesDir = path.resolve(import.meta.dirname, '../modules');
const manifests: Manifest[] = readdirSync(modulesDir)
  .filter((d) => existsSync(path.join(modulesDir, d, 'module.toml')))
  .map((d) => {
    const m = parse(readFileSync(path.join(modulesDir, d, 'module.toml'), 'utf8')) as Partial<Manifest>;
    return { name: String(m.name), depends: m.depends ?? [], critical: m.critical === true, enabled: m.enabled !== false };
  });
const byName = new Map(manifests.map((m) => [m.name, m]));

/** What the service should report for each module when `off` is disabled: a hard dependency that is down blocks. */
function expectedStates(off: string | undefined): Map<string, string> {
  const states = new Map<string, string>();
  const state = (name: string): string => {
    let s = states.get(name);
    if (!s) {
      const m = byName.get(name);
      if (!m) s = 'absent';
      else if (name === off || !m.enabled) s = 'disabled';
      else s = m.depends.every((d) => state(d) === 'running') ? 'running' : 'blocked';
      states.set(name, s);
    }
    return s;
  };
  for (const m of manifests) state(m.name);
  return states;
}

async function checkWithout(off: string | undefined): Promise<void> {
  const critical = off !== undefined && byName.get(off)!.critical;
  const config = off ? `[modules]\ndisabled = ["${off}"]\n${critical ? `allow_disable_critical = ["${off}"]\n` : ''}` : '';
  // Every built-in module: no `only`, which would bypass [modules] disabled.
  const k = await startTestKernel({ config });
  try {
    const actual = new Map(k.kernel.modules().map((m) => [m.id, m]));
    const wrong = [...expectedStates(off)]
      .filter(([name, state]) => actual.get(name)?.state !== state)
      .map(([name, state]) => `${name} is ${actual.get(name)?.state ?? 'absent'} (${actual.get(name)?.error ?? 'no error'}), expected ${state}`);
    assert.deepEqual(wrong, []);
    // The health route is a module's too: it answers unless its own module is the one switched off.
    const health = await k.request('/api/health');
    assert.equal(health.status, off === HEALTH_OWNER ? 404 : 200, `GET /api/health answered ${health.status}`);
  } finally {
    await k.stop();
  }
}

// Which modules run does not depend on the engine (each module migrates its own tables, named after it), and on
// PostgreSQL each of these kernels migrates a database of its own (about twice the time): it runs in the SQLite pass.
const skip = process.env.TALON_TEST_DB === 'postgres' ? 'module independence is checked in the SQLite pass' : false;

// Kernels boot in parallel, four at a time: each takes about a second, mostly waiting on I/O.
describe('the service starts with each module disabled in turn', { concurrency: 4, skip }, () => {
  it('all modules run when none is disabled', () => checkWithout(undefined));
  for (const m of manifests) {
    it(`without ${m.name}${m.critical ? ' (critical, with allow_disable_critical)' : ''}`, () => checkWithout(m.name));
  }
});
