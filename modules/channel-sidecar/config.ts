/**
 * The sidecar adapter's configure fields (besides the common ones and `token`). The restart fields keep the
 * reference's names and defaults ([[sidecar_channels]] in its config.toml), so an operator can copy them over.
 */
import type { ChannelFieldSchema } from '@talon/channels';

const ENV_NAME = '[A-Za-z_][A-Za-z0-9_]*';

export const sidecarFields = {
  type: 'object',
  properties: {
    command: { type: 'string', minLength: 1, description: 'the adapter program (an absolute path, or a name looked up on PATH)' },
    args: { type: 'array', items: { type: 'string' }, maxItems: 64, description: 'its arguments' },
    env: {
      type: 'array',
      items: { type: 'string', pattern: `^${ENV_NAME}=` },
      maxItems: 64,
      description: 'NAME=value variables for the program; its environment holds nothing else but PATH, HOME and the token',
    },
    channel_type: { type: 'string', pattern: '^[a-z][a-z0-9_]{0,31}$', description: 'the platform the adapter speaks to (telegram, wechat …), for logs' },
    token_env: {
      type: 'string',
      pattern: `^${ENV_NAME}$`,
      description: 'the variable the token is passed in (the reference adapters read e.g. TELEGRAM_BOT_TOKEN); default SIDECAR_TOKEN',
    },
    restart_initial_backoff_ms: { type: 'integer', minimum: 10, maximum: 60_000, description: 'first restart delay (default 500)' },
    restart_max_backoff_ms: { type: 'integer', minimum: 10, maximum: 600_000, description: 'restart delay cap (default 30000)' },
    restart_max_retries: { type: 'integer', minimum: 1, maximum: 1000, description: 'consecutive failures before giving up (default 10)' },
    restart_reset_after_secs: { type: 'integer', minimum: 1, maximum: 86_400, description: 'uptime that resets the failure count (default 60)' },
    ready_timeout_secs: { type: 'number', minimum: 0.1, maximum: 600, description: 'a program that sent no ready by then is killed (default 30)' },
    heartbeat_secs: { type: 'number', minimum: 0.1, maximum: 3600, description: 'how often a heartbeat is sent to the program (default 60)' },
    shutdown_grace_secs: { type: 'number', minimum: 0.1, maximum: 60, description: 'wait after shutdown, then SIGTERM, then SIGKILL (default 5)' },
  },
  required: ['command'],
  additionalProperties: false,
} as const satisfies ChannelFieldSchema;

export interface SidecarSettings {
  argv: string[];
  env: Record<string, string>;
  channelType: string;
  restart: { initialMs: number; maxMs: number; maxRetries: number; resetAfterMs: number };
  readyTimeoutMs: number;
  graceMs: number;
  heartbeatMs: number;
}

const num = (value: unknown, fallback: number) => (typeof value === 'number' ? value : fallback);

export function sidecarSettings(config: Readonly<Record<string, unknown>>, secrets: Readonly<Record<string, string | undefined>>): SidecarSettings {
  const env: Record<string, string> = {};
  for (const pair of (config.env as string[] | undefined) ?? []) {
    const at = pair.indexOf('=');
    env[pair.slice(0, at)] = pair.slice(at + 1);
  }
  if (secrets.token) env[typeof config.token_env === 'string' ? config.token_env : 'SIDECAR_TOKEN'] = secrets.token;
  return {
    argv: [String(config.command), ...((config.args as string[] | undefined) ?? [])],
    env,
    channelType: typeof config.channel_type === 'string' ? config.channel_type : 'sidecar',
    restart: {
      initialMs: num(config.restart_initial_backoff_ms, 500),
      maxMs: num(config.restart_max_backoff_ms, 30_000),
      maxRetries: num(config.restart_max_retries, 10),
      resetAfterMs: num(config.restart_reset_after_secs, 60) * 1000,
    },
    readyTimeoutMs: num(config.ready_timeout_secs, 30) * 1000,
    graceMs: num(config.shutdown_grace_secs, 5) * 1000,
    heartbeatMs: num(config.heartbeat_secs, 60) * 1000,
  };
}
