/**
 * GET /api/plugins/{name}/lint: what is wrong (errors: the plugin cannot run as it is) and what is doubtful
 * (warnings) about a plugin, without running it.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { RUNTIME_SPECS, runtimeOf, which } from './runtimes.ts';
import { SIGNATURE_FILE } from './signing.ts';
import type { LoadedPlugin } from './store.ts';

export interface LintReport {
  plugin: string;
  ok: boolean;
  errors: string[];
  warnings: string[];
}

export function lint(p: LoadedPlugin): LintReport {
  const errors: string[] = [];
  const warnings: string[] = [];
  const m = p.manifest;
  if (!m) return { plugin: p.name, ok: false, errors: [p.error ?? 'plugin.toml does not load'], warnings };
  errors.push(...p.hookProblems);
  if (p.error && !p.hookProblems.includes(p.error)) errors.push(p.error);
  if (m.runtime && !runtimeOf(m.runtime)) errors.push(`[hooks] runtime '${m.runtime}' is not one of ${Object.keys(RUNTIME_SPECS).join(', ')}`);
  const hooks = Object.entries(m.hooks);
  if (!hooks.length) warnings.push('the plugin declares no hooks: it does nothing');
  const ext = RUNTIME_SPECS[p.runtime].ext;
  for (const [hook, rel] of hooks) {
    const actual = path.extname(rel);
    if (ext && actual !== ext) warnings.push(`hook ${hook}: '${rel}' does not end in ${ext}, the extension of runtime ${p.runtime}`);
    if (!ext && actual) warnings.push(`hook ${hook}: '${rel}' has an extension, but native hooks are executables`);
  }
  if (!m.description) warnings.push('no description');
  if (!m.author) warnings.push('no author');
  if (m.version === '0.0.0') warnings.push('no version');
  if (p.launcher && !which(p.launcher))
    warnings.push(`the launcher '${p.launcher}' of runtime ${p.runtime} is not installed here (${RUNTIME_SPECS[p.runtime].installHint})`);
  for (const r of m.requires)
    if (r.binary && !which(r.binary)) warnings.push(`required program '${r.binary}' is missing${r.install_hint ? `: ${r.install_hint}` : ''}`);
  if (m.requirements && !existsSync(path.join(p.dir, m.requirements))) warnings.push(`the dependency file '${m.requirements}' does not exist`);
  if (hooks.length && !Object.keys(m.integrity).length && !existsSync(path.join(p.dir, SIGNATURE_FILE)))
    warnings.push('the hooks are neither hashed in [integrity] nor signed (POST /api/plugins/{name}/sign)');
  if (m.misplacedSettings.length) warnings.push(`hook settings at the top level are not read (${m.misplacedSettings.join(', ')}): move them into [hooks]`);
  if (!p.enabled) warnings.push('the plugin is disabled');
  return { plugin: p.name, ok: errors.length === 0, errors, warnings };
}
