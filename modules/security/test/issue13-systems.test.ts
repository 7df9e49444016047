import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestKernel } from '@talon/testing';

const FOUR = ['prompt_injection_scanning', 'manifest_signing', 'wasm_dual_metering', 'taint_tracking'];
const MODULES = ['security', 'prompt-guard', 'manifest-signing', 'wasm', 'taint', 'agents'];
const states = async (k: { request(p: string): Promise<Response> }) =>
  ((await (await k.request('/api/security')).json()) as { security_systems: Record<string, string> }).security_systems;

test('GET /api/security: the four systems of the skills issue are active while their code runs and is on', async () => {
  const on = await startTestKernel({ only: MODULES, config: '[default_model]\nprovider = "openai"\nmodel = "m"\n' });
  const off = await startTestKernel({ only: ['security'] });
  // The taint module runs, but a policy with every sink off checks nothing: the system is off.
  const sinksOff = await startTestKernel({
    only: MODULES,
    config:
      '[default_model]\nprovider = "openai"\nmodel = "m"\n[taint.sinks]\nshell_exec = "off"\nweb_fetch = "off"\nagent_send = "off"\nmcp = "off"\nfile_write = "off"\n',
  });
  try {
    const [a, b, c] = await Promise.all([states(on), states(off), states(sinksOff)]);
    for (const name of FOUR) {
      assert.equal(a[name], 'active', name);
      assert.equal(b[name], 'inactive', name);
    }
    assert.equal(c.taint_tracking, 'inactive');
    assert.equal(sinksOff.kernel.modules().find((m) => m.id === 'taint')?.state, 'running');
    for (const name of FOUR.filter((n) => n !== 'taint_tracking')) assert.equal(c[name], 'active', name);
  } finally {
    await Promise.all([on.stop(), off.stop(), sinksOff.stop()]);
  }
});
