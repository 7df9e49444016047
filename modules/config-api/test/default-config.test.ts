import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Kernel } from '../../../kernel/kernel.ts';

test('first start writes a commented default config generated from the schemas of the kernel and the running modules', async () => {
  const home = mkdtempSync(path.join(tmpdir(), 'talon-defcfg-'));
  try {
    // No config file: the kernel listens on the default address, which may be taken; the file is written before that.
    const kernel = new Kernel({ home, only: ['config-api', 'auth', 'rate-limit', 'logs'], stdout: false });
    await kernel.start().catch(() => undefined);
    await kernel.stop();
    const text = readFileSync(path.join(home, 'config.toml'), 'utf8');
    assert.match(text, /^# Talon configuration/);
    assert.match(text, /^# api_listen = "127.0.0.1:4545"   # host:port the HTTP API listens on$/m);
    assert.match(text, /^# api_key = "" {3}# .+\(module auth\)$/m);
    assert.match(text, /^# rate_limit_per_second = 10 {3}# .+\(module rate-limit\)$/m);
    assert.match(text, /^# \[logs\].*\n# file = true {3}# /m);
    // Top-level keys come before every table, so uncommenting one never lands it in a table.
    assert.ok(text.indexOf('# rate_limit_per_second') < text.indexOf('# ['));
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});
