/**
 * scripts/build-dashboard.mjs into one folder from two processes at once (two nodes of a fleet building into the
 * shared data directory): both succeed, one whole build is left in place, and no staging or old folder is left.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const script = path.resolve(import.meta.dirname, '../../../scripts/build-dashboard.mjs');

function build(out: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [script, '--out', out], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('close', (code) => resolve({ code, output }));
  });
}

test('two builds into one folder at once: both succeed and one whole build is left, nothing else', { timeout: 150_000 }, async () => {
  const root = mkdtempSync(path.join(tmpdir(), 'talon-dashboard-builds-'));
  try {
    const out = path.join(root, 'dist');
    const results = await Promise.all([build(out), build(out)]);
    for (const r of results) assert.equal(r.code, 0, r.output);
    assert.deepEqual(readdirSync(root), ['dist']);
    assert.ok(existsSync(path.join(out, 'index.html')));
    assert.ok(readdirSync(path.join(out, 'compressed')).length > 0, 'the compressed assets came with it');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
