/** The [approval] policy as decisions: which tool calls wait for a human, and how risky an action is. */
import picomatch from 'picomatch';
import type { RiskLevel } from '@talon/approvals';
import type { ApprovalConfig } from '../config.ts';

const matches = (globs: readonly string[], name: string) => globs.length > 0 && picomatch.isMatch(name, globs as string[]);

export function needsApproval(config: ApprovalConfig, tool: string): boolean {
  return matches(config.require_approval, tool);
}

export function riskOf(config: ApprovalConfig, action: string): RiskLevel {
  const levels = config.risk_levels;
  if (matches(levels.critical, action)) return 'critical';
  if (matches(levels.high, action)) return 'high';
  if (matches(levels.medium, action)) return 'medium';
  return 'low';
}
