/** How plugins look in answers. */
import { isSecretKey, REDACTED } from '@talon/module-sdk';
import type { ContextEngineService } from './engine.ts';
import { launcherPresent, type LoadedPlugin } from './store.ts';

export function pluginSummary(p: LoadedPlugin, engine: ContextEngineService) {
  const m = p.manifest;
  return {
    name: p.name,
    version: m?.version ?? null,
    description: m?.description ?? '',
    author: m?.author ?? '',
    runtime: p.runtime,
    hooks: m?.hooks ?? {},
    hooks_valid: p.hooksValid,
    enabled: p.enabled,
    status: p.status,
    error: p.error,
    signed: p.signed,
    active: p.status === 'loaded' && engine.configured().includes(p.name),
    path: p.dir,
  };
}

export function pluginDetail(p: LoadedPlugin, engine: ContextEngineService) {
  const m = p.manifest;
  return {
    ...pluginSummary(p, engine),
    launcher: p.launcher,
    runtime_available: launcherPresent(p),
    hook_problems: p.hookProblems,
    requirements: m?.requirements ?? null,
    requires: m?.requires ?? [],
    integrity_count: Object.keys(m?.integrity ?? {}).length,
    settings: m
      ? {
          hook_timeout_secs: m.hookTimeoutSecs,
          on_hook_failure: m.onHookFailure,
          max_retries: m.maxRetries,
          retry_delay_ms: m.retryDelayMs,
          only_for_agent_ids: m.onlyForAgentIds,
          allow_network: m.allowNetwork,
          allow_filesystem: m.allowFilesystem,
          persistent_subprocess: m.persistent,
          prespawn: m.prespawn,
          priority: m.priority,
        }
      : null,
    config: m?.config ?? {},
    env_keys: Object.keys(m?.env ?? {}),
  };
}

/** Values of keys that look like secrets (…KEY, …SECRET, …PASSWORD, …TOKEN) are never shown. */
export const secretLooking = (key: string) => isSecretKey(key.toLowerCase()) || /KEY|SECRET|PASSWORD|TOKEN|CREDENTIAL/i.test(key);

export function envView(p: LoadedPlugin) {
  const m = p.manifest;
  const env = Object.fromEntries(Object.entries(m?.env ?? {}).map(([k, v]) => [k, secretLooking(k) && v ? REDACTED : v]));
  const schema = Object.fromEntries(Object.entries(m?.envSchema ?? {}).map(([k, s]) => [k, { ...s, present: Boolean(m?.env[k] || process.env[k]) }]));
  return { name: p.name, env, env_schema: schema };
}
