import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startTestKernel } from '@talon/testing';

test('first start writes a commented default config generated from the schemas of the kernel and the running modules', async () => {
  const k = await startTestKernel({ config: null, only: ['config-api', 'auth', 'rate-limit', 'logs'] });
  try {
    const text = readFileSync(path.join(k.home, 'config.toml'), 'utf8');
    assert.match(text, /^# Talon configuration/);
    assert.match(text, /^# api_listen = "127.0.0.1:4545"   # host:port the HTTP API listens on$/m);
    assert.match(text, /^# api_key = "" {3}# .+\(module auth\)$/m);
    assert.match(text, /^# rate_limit_per_second = 10 {3}# .+\(module rate-limit\)$/m);
    assert.match(text, /^# \[logs\].*\n# file = true {3}# /m);
    // Top-level keys come before every table, so uncommenting one never lands it in a table.
    assert.ok(text.indexOf('# rate_limit_per_second') < text.indexOf('# ['));
  } finally {
    await k.stop();
  }
});
