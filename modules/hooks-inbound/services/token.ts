/**
 * The hook token: from [hooks] token or the environment. It is a credential of its own: start-up refuses one that
 * equals the api_key (a leaked hook token must never open the admin API — openclaw#20809).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { ConfigError } from '@talon/module-sdk';
import type { AuthStatus } from '@talon/auth';
import type { HooksConfig } from '../config.ts';

export const MIN_TOKEN = 32;

export function hookToken(config: HooksConfig, env: NodeJS.ProcessEnv = process.env): string {
  return config.token || env[config.token_env] || '';
}

/** Throws ConfigError when the hooks are on without a usable token, or with the api_key as token (auth compares, in constant time). */
export function checkToken(config: HooksConfig, auth: Pick<AuthStatus, 'isApiKey'> | undefined, env: NodeJS.ProcessEnv = process.env): void {
  if (!config.enabled) return;
  const token = hookToken(config, env);
  if (token.length < MIN_TOKEN) {
    throw new ConfigError(`[hooks] enabled = true needs a token of at least ${MIN_TOKEN} characters in [hooks] token or in $${config.token_env}`);
  }
  if (auth?.isApiKey(token)) {
    throw new ConfigError('[hooks] token equals api_key: the hook token must be a separate credential (a leaked hook token would open the whole API)');
  }
}

export function sameToken(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}
