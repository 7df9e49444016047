import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'smol-toml';
import { startTestKernel, type TestKernel } from '@talon/testing';
import { SPEC_SYSTEMS } from '../services/systems.ts';

const SPEC_NAMES = [
  'merkle_audit_trail',
  'taint_tracking',
  'wasm_dual_metering',
  'security_headers',
  'health_redaction',
  'subprocess_sandbox',
  'manifest_signing',
  'gcra_rate_limiter',
  'secret_zeroization',
  'path_traversal_prevention',
  'ssrf_protection',
  'capability_inheritance_validation',
  'peer_hmac_auth',
  'prompt_injection_scanning',
  'loop_guard',
  'session_repair',
];

const kernels: TestKernel[] = [];
after(() => Promise.all(kernels.map((k) => k.stop())));

interface Overview {
  security_systems: Record<string, string>;
  total_systems: number;
  all_active: boolean;
  active_systems: number;
}

async function securityOf(k: TestKernel): Promise<Overview> {
  const res = await k.request('/api/security');
  assert.equal(res.status, 200);
  return (await res.json()) as Overview;
}

const modulesDir = path.resolve(import.meta.dirname, '../..');
const fixtures = path.join(import.meta.dirname, 'fixtures');

test('security lists the 16 systems of the spec, and each is declared by one built-in module', () => {
  assert.deepEqual([...SPEC_SYSTEMS].sort(), [...SPEC_NAMES].sort());
  const declared = readdirSync(modulesDir).flatMap((name) => {
    let text: string;
    try {
      text = readFileSync(path.join(modulesDir, name, 'module.toml'), 'utf8');
    } catch {
      return [];
    }
    const contributes = parse(text).contributes as { security?: { systems: string[] } } | undefined;
    return contributes?.security?.systems ?? [];
  });
  assert.deepEqual(declared.sort(), [...SPEC_NAMES].sort());
});

test('a module security does not know declares a system in its module.toml: the overview lists it; a bad table is skipped', async () => {
  const config = `module_paths = [${JSON.stringify(fixtures)}]\n`;
  const [on, off] = await Promise.all([
    startTestKernel({ only: ['security', 'guard-probe', 'bad-probe'], config: `log_level = "warn"\n${config}` }),
    startTestKernel({ only: ['security'], config }),
  ]);
  kernels.push(on, off);
  const a = (await securityOf(on)) as Overview & { implemented_by: Record<string, string> };
  assert.equal(a.security_systems.probe_guard, 'active');
  assert.equal(a.security_systems.loop_guard, 'inactive', 'a module from module_paths cannot switch on a spec system: agents is off');
  assert.notEqual(a.implemented_by.loop_guard, 'guard-probe');
  assert.ok(
    on.logLines().some((l) => l.includes('claims the built-in system(s) loop_guard')),
    'the claim is logged',
  );
  assert.equal(a.implemented_by.probe_guard, 'guard-probe');
  assert.equal(a.total_systems, 17);
  assert.equal(a.active_systems, 1);
  assert.ok(!Object.keys(a.security_systems).some((s) => /not/i.test(s)), 'the malformed declaration adds nothing');
  assert.ok(
    on.logLines().some((l) => l.includes("'bad-probe' declares its security systems wrongly")),
    'the malformed declaration is logged',
  );
  // guard-probe is disabled (not started): its own system is gone.
  assert.equal(off.kernel.modules().find((m) => m.id === 'guard-probe')?.state, 'disabled');
  const b = await securityOf(off);
  assert.equal(b.security_systems.probe_guard, undefined);
  assert.equal(b.security_systems.loop_guard, 'inactive');
  assert.equal(b.total_systems, 16);
});

test('a system is active only while the module implementing it runs', async () => {
  const [withLimiter, without] = await Promise.all([
    startTestKernel({ only: ['security', 'security-headers', 'rate-limit', 'system'] }),
    startTestKernel({ only: ['security', 'security-headers', 'system'] }),
  ]);
  kernels.push(withLimiter, without);
  const a = await securityOf(withLimiter);
  assert.equal(a.total_systems, 16);
  assert.deepEqual(Object.keys(a.security_systems).sort(), [...SPEC_NAMES].sort());
  assert.equal(a.security_systems.security_headers, 'active');
  assert.equal(a.security_systems.health_redaction, 'active');
  assert.equal(a.security_systems.gcra_rate_limiter, 'active');
  assert.equal(a.security_systems.merkle_audit_trail, 'inactive');
  assert.equal(a.active_systems, 3);
  assert.equal(a.all_active, false);
  const b = await securityOf(without);
  assert.equal(b.security_systems.gcra_rate_limiter, 'inactive');
  assert.equal(b.security_systems.security_headers, 'active');
  assert.ok(Object.values(b.security_systems).every((s) => s === 'active' || s === 'inactive'));
});

test('disabled in config: inactive, and the service still runs', async () => {
  // No `only` (it would bypass [modules] disabled); rate-limit is a security module, so disabling it needs the override.
  const k = await startTestKernel({ config: '[modules]\ndisabled = ["rate-limit"]\nallow_disable_critical = ["rate-limit"]\n' });
  kernels.push(k);
  assert.equal(k.kernel.modules().find((m) => m.id === 'rate-limit')?.state, 'disabled');
  const overview = await securityOf(k);
  assert.equal(overview.security_systems.gcra_rate_limiter, 'inactive');
  assert.equal(overview.security_systems.security_headers, 'active');
  assert.equal((await k.request('/api/health')).status, 200);
});
