/** agentHooks.checkManifest: each skill a manifest names must be installed (loaded: a blocked one is not). */
import type { ManifestCheck } from '@talon/agents';

export function checkSkillNames({ manifest, problems }: ManifestCheck, installed: (name: string) => boolean): void {
  for (const name of namesOf(manifest.extra.skills)) {
    if (name !== '*' && !installed(name)) problems.push({ field: 'skills', message: `unknown skill '${name}': it is not installed` });
  }
}

/** The names of a manifest's `skills` key: a list, or one name (the agents module refuses any other shape). */
function namesOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}
