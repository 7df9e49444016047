/**
 * What the built-in tools need from the outside, resolved at call time so a
 * hot reload of the agents or memory module is picked up. Tests pass fakes.
 */
import type { AgentRegistry, AgentRunner, ToolDefinition } from '../../agents/api.ts';
import type { KvMemory } from '../../memory/api.ts';
import type { ToolsConfig } from '../config.ts';

export interface ToolDeps {
  config(): ToolsConfig;
  registry(): AgentRegistry;
  runner(): AgentRunner;
  /** undefined when the memory module is not loaded. */
  memory(): KvMemory | undefined;
}

/** A built-in tool; requiresAgent=false marks the few that run without an agent (POST invoke without agent_id). */
export type BuiltinTool = ToolDefinition & { source: 'builtin'; requiresAgent?: boolean };

export type ToolFactory = (deps: ToolDeps) => BuiltinTool;
