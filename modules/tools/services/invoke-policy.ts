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

function topLevel(value: unknown): InvokePolicy {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return { enabled: false, allowlist: [] };
  const v = value as Record<string, unknown>;
  const allowlist = Array.isArray(v.allowlist) ? v.allowlist.filter((x): x is string => typeof x === 'string') : [];
  return { enabled: v.enabled === true, allowlist };
}

export function invokePolicy(section: ToolsConfig['invoke'], toolInvoke: unknown): InvokePolicy {
  const legacy = topLevel(toolInvoke);
  const ours = { enabled: section.enabled ?? section.allowlist.length > 0, allowlist: section.allowlist };
  return { enabled: ours.enabled || legacy.enabled, allowlist: [...new Set([...ours.allowlist, ...legacy.allowlist])] };
}

/** The 403 text, in the reference's words, or undefined when the tool may be invoked. */
export function invokeRefusal(policy: InvokePolicy, tool: string): string | undefined {
  if (!policy.enabled) return "Direct tool invocation is disabled. Enable '[tool_invoke] enabled = true' and add the tool to 'allowlist'.";
  if (!anyGlob(policy.allowlist, tool)) return `Tool '${tool}' is not in '[tool_invoke] allowlist'`;
  return undefined;
}
