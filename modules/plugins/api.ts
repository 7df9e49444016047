/**
 * Contract of the plugins module: the context engine's plugins as other modules may see them (the dashboard, a
 * hand's allow-list), and the events a failing hook publishes.
 */
import { defineEvents, payload, serviceRef } from '@talon/module-sdk';

export type HookName = 'ingest' | 'after_turn' | 'bootstrap' | 'assemble' | 'compact' | 'transform_tool_result' | 'prepare_subagent' | 'merge_subagent';

export interface PluginSummary {
  name: string;
  version: string;
  description: string;
  runtime: string;
  hooks: HookName[];
  enabled: boolean;
  /** 'loaded', 'disabled' or 'error'. */
  status: string;
  error: string | null;
}

export interface ContextEngine {
  plugins(): PluginSummary[];
  /** The plugins whose hooks run for this agent, in order (the configured stack narrowed by the agent's allow-list). */
  stackFor(agentId: string): string[];
}

export const contextEngine = serviceRef<ContextEngine>('plugins.engine');

export const pluginEvents = defineEvents('plugins', {
  'plugin.hook_failed': payload<{ plugin: string; hook: string; agentId?: string; error: string; policy: string }>(),
});
