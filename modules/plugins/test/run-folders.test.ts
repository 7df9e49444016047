/** Hook processes' private folders: one folder per process under data/plugins/run, so processes sharing it keep theirs. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startAgentTestKernel } from '@talon/testing';
import { MODULES } from './helpers.ts';

test("a starting process removes the run folders of processes that are gone, never a live process's", async () => {
  const home = mkdtempSync(path.join(tmpdir(), 'plugins-run-'));
  const runBase = path.join(home, 'data', 'plugins', 'run');
  mkdirSync(path.join(runBase, 'a-crashed-process', 'hook-1'), { recursive: true });
  const options = { only: MODULES, home, config: '[skills]\nwatch = false\n' };
  const first = await startAgentTestKernel(options);
  try {
    assert.equal(existsSync(path.join(runBase, 'a-crashed-process')), false, 'the gone process’s folder was removed');
    const mine = path.join(runBase, first.kernel.nodes.id);
    assert.ok(existsSync(mine), 'each process has its own folder');
    writeFileSync(path.join(mine, 'in-use'), 'a running hook’s file');
    const second = await startAgentTestKernel(options);
    try {
      assert.ok(existsSync(path.join(mine, 'in-use')), 'the live process’s folder is kept');
      assert.ok(existsSync(path.join(runBase, second.kernel.nodes.id)));
    } finally {
      await second.stop();
    }
  } finally {
    await first.stop();
    rmSync(home, { recursive: true, force: true });
  }
});
