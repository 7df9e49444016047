/** Whether a hand's requirements are met here: programs on PATH, environment variables set (values never shown). */
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import type { HandDefinition, HandRequirement, HandSetting } from '@talon/hands';

/** The full path of a program on PATH, or undefined. */
export function which(program: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (!program || program.includes('/')) return undefined;
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const full = path.join(dir, program);
    try {
      if (statSync(full).isFile()) {
        accessSync(full, constants.X_OK);
        return full;
      }
    } catch {
      // not here
    }
  }
  return undefined;
}

const isSet = (name: string) => Boolean(process.env[name.trim()]);

export function satisfied(r: HandRequirement): boolean {
  switch (r.requirement_type) {
    case 'binary':
      return which(r.check_value) !== undefined;
    case 'env_var':
    case 'api_key':
      return isSet(r.check_value);
    case 'any_env_var':
      return r.check_value.split(',').some(isSet);
  }
}

export interface RequirementView {
  key: string;
  label: string;
  type: HandRequirement['requirement_type'];
  check_value: string;
  optional: boolean;
  satisfied: boolean;
  description: string;
  install: Record<string, unknown>;
}

export function requirementViews(def: HandDefinition): RequirementView[] {
  return def.requirements.map((r) => ({
    key: r.key,
    label: r.label,
    type: r.requirement_type,
    check_value: r.check_value,
    optional: r.optional,
    satisfied: satisfied(r),
    description: r.description,
    install: r.install,
  }));
}

/** Mandatory requirements all met (optional ones never count). */
export const requirementsMet = (views: RequirementView[]) => views.every((r) => r.optional || r.satisfied);

/** A setting's options with whether each can work here (its provider key set, its program present). */
export function optionViews(setting: HandSetting) {
  return setting.options.map((o) => ({
    ...o,
    available: (!o.provider_env || isSet(o.provider_env)) && (!o.binary || which(o.binary) !== undefined),
  }));
}
