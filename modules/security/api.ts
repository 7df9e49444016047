/**
 * Contract of the security module: the overview (GET /api/security) asks the modules that implement a system
 * whether it is on. A system whose module runs is active unless a tap of that module says otherwise — a policy
 * that switches it all off, or a part that is not ready; a module that is not running is never active.
 */
import { SyncWaterfallHook, defineHooks } from '@talon/module-sdk';

export type SystemState = 'active' | 'inactive';

export const securityHooks = defineHooks('security.hooks', () => ({
  /** Passes the states of the systems whose module runs; a tap sets its own module's systems to 'inactive' when off. */
  systemStates: new SyncWaterfallHook<[Record<string, SystemState>]>(['systems']),
}));
