import type { ModuleInfo } from '@talon/module-sdk';
import type { SystemState } from '@talon/security';

/** The spec's 16 security systems and the module that implements each. */
export const SYSTEMS: Readonly<Record<string, string>> = Object.freeze({
  merkle_audit_trail: 'audit',
  taint_tracking: 'taint',
  wasm_dual_metering: 'wasm',
  security_headers: 'security-headers',
  health_redaction: 'system',
  subprocess_sandbox: 'tools',
  manifest_signing: 'manifest-signing',
  gcra_rate_limiter: 'rate-limit',
  secret_zeroization: 'secrets',
  path_traversal_prevention: 'agents',
  ssrf_protection: 'net',
  capability_inheritance_validation: 'agents',
  peer_hmac_auth: 'peers',
  prompt_injection_scanning: 'prompt-guard',
  loop_guard: 'agents',
  session_repair: 'agents',
});

/**
 * A system is active while the module implementing it runs and that module does not report it off (`report` runs
 * the taps of securityHooks.systemStates; a tap can only switch a system off, never on).
 */
export function securityOverview(modules: readonly ModuleInfo[], report: (states: Record<string, SystemState>) => Record<string, SystemState>) {
  const running = new Set(modules.filter((m) => m.state === 'running').map((m) => m.id));
  const byModule: Record<string, SystemState> = {};
  for (const [name, module] of Object.entries(SYSTEMS)) byModule[name] = running.has(module) ? 'active' : 'inactive';
  const reported = report({ ...byModule });
  const systems: Record<string, SystemState> = {};
  for (const name of Object.keys(SYSTEMS)) systems[name] = byModule[name] === 'active' && reported[name] !== 'inactive' ? 'active' : 'inactive';
  const states = Object.values(systems);
  return {
    security_systems: systems,
    total_systems: states.length,
    active_systems: states.filter((s) => s === 'active').length,
    all_active: states.every((s) => s === 'active'),
    implemented_by: SYSTEMS,
  };
}
