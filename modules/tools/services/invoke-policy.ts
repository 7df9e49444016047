/**
 * Who may call POST /api/tools/{name}/invoke. Our section is [tools.invoke];
 * the reference's top-level [tool_invoke] table (enabled, allowlist) is read
 * too, and the two are combined (either enables, allowlists are joined).
 */
import type { ToolsConfig } from '../config.ts';
import { anyGlob } from './globs.ts';

export interface InvokePolicy {
  enabled: boolean;
  allowlist: string[];
}

export function invokePolicy(config: Pick<ToolsConfig, 'invoke' | 'tool_invoke'>): InvokePolicy {
  const ours = config.invoke;
  const legacy = config.tool_invoke;
  const enabled = (ours.enabled ?? ours.allowlist.length > 0) || legacy.enabled;
  return { enabled, allowlist: [...new Set([...ours.allowlist, ...legacy.allowlist])] };
}

/** The 403 text, in the reference's words, or undefined when the tool may be invoked. */
export function invokeRefusal(policy: InvokePolicy, tool: string): string | undefined {
  if (!policy.enabled) return "Direct tool invocation is disabled. Enable '[tool_invoke] enabled = true' and add the tool to 'allowlist'.";
  if (!anyGlob(policy.allowlist, tool)) return `Tool '${tool}' is not in '[tool_invoke] allowlist'`;
  return undefined;
}
