/**
 * The environment a skill program gets: nothing by default; the names its env_passthrough asks for, minus the
 * operator's deny patterns (secrets, loader hijacks) unless the operator allowed that name for that skill.
 */
import type { SkillsConfig } from '../config.ts';

function globRe(pattern: string): RegExp {
  return new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`, 'i');
}

export function passthroughFor(skill: string, wanted: readonly string[], config: SkillsConfig): string[] {
  const denied = config.env_passthrough_denied.map(globRe);
  const allowed = new Set(config.env_passthrough_allow[skill] ?? []);
  return wanted.filter((name) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && (allowed.has(name) || !denied.some((re) => re.test(name))));
}
