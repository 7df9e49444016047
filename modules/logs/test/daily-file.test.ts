import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestKernel } from '@talon/testing';

const probe = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'logs-probe');
const day = (offsetDays = 0) => new Date(Date.now() + offsetDays * 24 * 3600 * 1000).toISOString().slice(0, 10);

/**
 * Boots a kernel with the logs module in a home of its own, runs `during`, stops it (which ends the
 * file) and hands back the files left in $TALON_HOME/logs with their contents.
 */
async function run(config: string, options: { prepare?: (logs: string) => void; during?: (log: (msg: string) => void) => void } = {}) {
  const home = mkdtempSync(path.join(tmpdir(), 'talon-logs-'));
  const logs = path.join(home, 'logs');
  try {
    options.prepare?.(logs);
    const k = await startTestKernel({ only: ['logs', 'logs-probe'], home, config: `log_level = "info"\nmodule_paths = [${JSON.stringify(probe)}]\n${config}` });
    options.during?.((msg) => k.kernel.log.info(msg));
    await k.stop();
    const names = existsSync(logs) ? readdirSync(logs).sort() : [];
    return { names, texts: names.map((name) => readFileSync(path.join(logs, name), 'utf8')) };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

test("the day's file holds the start-up lines written before the module started, then the later ones, each once and in order", async () => {
  // An unknown key is warned about before any module registers; logs-probe logs while registering,
  // after the logs module tapped the log but before it started.
  const { names, texts } = await run('no_such_key = 1\n', { during: (log) => log('a later line') });
  assert.deepEqual(names, [`talon-${day()}.log`]);
  const messages = texts[0]
    .trim()
    .split('\n')
    .map((l) => (JSON.parse(l) as { msg: string }).msg);
  const expected = ["unknown configuration key 'no_such_key' (ignored)", 'logs-probe registered', 'talon is listening', 'a later line'];
  for (const msg of expected) assert.equal(messages.filter((m) => m === msg).length, 1, `${msg}: ${messages.join(' | ')}`);
  assert.deepEqual(
    messages.filter((m) => expected.includes(m)),
    expected,
  );
});

test('[logs] retention_days deletes older daily files at start, and only those', async () => {
  const old = 'talon-2001-01-01.log';
  const recent = `talon-${day(-1)}.log`;
  const { names } = await run('[logs]\nretention_days = 2\n', {
    prepare(logs) {
      mkdirSync(logs, { recursive: true });
      for (const name of [old, recent, 'notes.txt']) writeFileSync(path.join(logs, name), '{}\n');
    },
  });
  assert.deepEqual(names, ['notes.txt', recent, `talon-${day()}.log`].sort());
});

test('[logs] file = false writes no file', async () => {
  const { names } = await run('[logs]\nfile = false\n', { during: (log) => log('a later line') });
  assert.deepEqual(names, []);
});
