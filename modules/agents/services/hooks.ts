import type { HookRef } from '@talon/module-sdk';
import type { agentHooks } from '@talon/agents';

/** The agents hook catalogue as its owner calls it. */
export type AgentHooks = typeof agentHooks extends HookRef<infer T> ? T : never;
