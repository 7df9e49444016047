import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestKernel } from '@talon/module-sdk/testing';

const FOUR = ['prompt_injection_scanning', 'manifest_signing', 'wasm_dual_metering', 'taint_tracking'];

test('GET /api/security: the four systems of issue 13 are active while their modules run, inactive without them', async () => {
  const on = await startTestKernel({
    only: ['security', 'prompt-guard', 'manifest-signing', 'wasm', 'taint', 'agents'],
    config: '[default_model]\nprovider = "openai"\nmodel = "m"\n',
  });
  const off = await startTestKernel({ only: ['security'] });
  try {
    const a = (await (await on.request('/api/security')).json()) as { security_systems: Record<string, string> };
    const b = (await (await off.request('/api/security')).json()) as { security_systems: Record<string, string> };
    for (const name of FOUR) {
      assert.equal(a.security_systems[name], 'active', name);
      assert.equal(b.security_systems[name], 'inactive', name);
    }
  } finally {
    await on.stop();
    await off.stop();
  }
});
