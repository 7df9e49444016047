import { Ajv } from 'ajv';
import { lazy, type ModuleInfo } from '@talon/module-sdk';
import type { SystemState } from '@talon/security';

/** The spec's 16 security systems: always listed, inactive while no running module declares one. */
export const SPEC_SYSTEMS: readonly string[] = Object.freeze([
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
]);

/** `[contributes.security]` in a module.toml: the systems the module implements. */
const contributionSchema = {
  type: 'object',
  properties: {
    systems: { type: 'array', items: { type: 'string', pattern: '^[a-z][a-z0-9_]*$' }, uniqueItems: true },
  },
  required: ['systems'],
  additionalProperties: false,
} as const;
const ajv = lazy(() => new Ajv({ allErrors: true }));
const validateContribution = lazy(() => ajv().compile<{ systems: string[] }>(contributionSchema));

export interface SecurityOverview {
  security_systems: Record<string, SystemState>;
  total_systems: number;
  active_systems: number;
  all_active: boolean;
  implemented_by: Record<string, string>;
}

/**
 * The security systems as the modules declare them. The modules come to security, security names none of them: each
 * declares the systems it implements in its own module.toml, and the overview is read from the module list per
 * request, so a module disabled, failed, reloaded or switched off by its policy shows at once.
 */
export class SecuritySystems {
  /** Per declaration table (a reload brings a new one): checked, and a bad one reported, once. */
  private readonly checked = new WeakMap<object, readonly string[]>();

  constructor(private readonly invalid: (module: string, problem: string) => void) {}

  /** The systems a module declares; a table that does not fit the schema counts as none. */
  declaredBy(m: ModuleInfo): readonly string[] {
    const table = m.contributes.security;
    if (!table) return [];
    let systems = this.checked.get(table);
    if (!systems) {
      systems = this.check(m, table);
      this.checked.set(table, systems);
    }
    return systems;
  }

  /**
   * A table's systems, checked. A module from module_paths may add systems but not claim one of the spec's: that
   * would show a protection as active while the built-in module that gives it is off.
   */
  private check(m: ModuleInfo, table: Record<string, unknown>): readonly string[] {
    const validate = validateContribution();
    if (!validate(table)) {
      this.invalid(m.id, ajv().errorsText(validate.errors, { dataVar: '[contributes.security]' }));
      return [];
    }
    const claimed = m.thirdParty ? table.systems.filter((s) => SPEC_SYSTEMS.includes(s)) : [];
    if (claimed.length)
      this.invalid(m.id, `[contributes.security] claims the built-in system(s) ${claimed.join(', ')}; only the module that implements one may`);
    return table.systems.filter((s) => !claimed.includes(s));
  }

  /**
   * The spec's systems and any other a running module declares. A system is active while a running module declares it
   * and no tap of securityHooks.systemStates (`report`) says it is off — a tap can switch a system off, never on.
   * `implemented_by` names a declaring module, a running one first, else a stopped one: the module to enable.
   */
  overview(modules: readonly ModuleInfo[], report: (states: Record<string, SystemState>) => Record<string, SystemState>): SecurityOverview {
    const declared: Record<string, SystemState> = Object.fromEntries(SPEC_SYSTEMS.map((s) => [s, 'inactive']));
    const implementedBy: Record<string, string> = {};
    const running = (m: ModuleInfo) => m.state === 'running';
    for (const m of [...modules.filter(running), ...modules.filter((m) => !running(m))])
      for (const system of this.declaredBy(m)) {
        if (running(m)) declared[system] = 'active';
        if (system in declared) implementedBy[system] ??= m.id;
      }
    const reported = report({ ...declared });
    const systems: Record<string, SystemState> = {};
    for (const [name, state] of Object.entries(declared)) systems[name] = state === 'active' && reported[name] !== 'inactive' ? 'active' : 'inactive';
    const states = Object.values(systems);
    return {
      security_systems: systems,
      total_systems: states.length,
      active_systems: states.filter((s) => s === 'active').length,
      all_active: states.every((s) => s === 'active'),
      implemented_by: implementedBy,
    };
  }
}
