/**
 * What the built-in tools need from the outside, resolved at call time so a
 * hot reload of the agents, memory or net module is picked up. Tests pass fakes.
 */
import type { AgentRegistry, AgentRunner, ToolDefinition } from '@talon/agents';
import type { KvMemory } from '@talon/memory';
import type { NetFetch } from '@talon/net';
import type { ToolsConfig } from '../config.ts';
import type { Sandbox } from './sandbox.ts';

export interface ToolDeps {
  config(): ToolsConfig;
  registry(): AgentRegistry;
  runner(): AgentRunner;
  /** undefined when the memory module is not loaded. */
  memory(): KvMemory | undefined;
  /** The SSRF-checked client web_fetch goes through. */
  net(): NetFetch;
  /** The subprocess sandbox of this module copy (its isolation probe runs once). */
  sandbox: Sandbox;
}

export type BuiltinTool = ToolDefinition & { source: 'builtin' };

export type ToolFactory = (deps: ToolDeps) => BuiltinTool;
