/**
 * Channel configurations: set through the API (a row of channels_config, secrets sealed in the vault) or read from
 * config.toml's [channels.<name>] (secrets named by environment variable, `<field>_env`). The API's row wins.
 */
import type { Store } from '@talon/module-sdk';
import type { SecretVault } from '@talon/secrets';
import type { ChannelAdapter } from '@talon/channels';
import type { ChannelsConfig, ChannelTable } from '../config.ts';

export type DmPolicy = 'pairing' | 'allowlist' | 'open' | 'disabled';
export type GroupPolicy = 'mention' | 'all' | 'disabled';

/** The common fields every channel has. */
export interface CommonSettings {
  agent_name?: string;
  dm_policy: DmPolicy;
  group_policy: GroupPolicy;
  allowed_users: string[];
  default_conversation?: string;
  owners: string[];
  /** Messages from one sender arriving within this many ms of each other are joined into one turn (0: off). */
  message_coalesce_window_ms: number;
}

export const COMMON_FIELDS = [
  'agent_name',
  'dm_policy',
  'group_policy',
  'allowed_users',
  'default_conversation',
  'owners',
  'message_coalesce_window_ms',
] as const;

export interface ChannelSettings {
  source: 'api' | 'config';
  enabled: boolean;
  common: CommonSettings;
  /** The adapter's own non-secret fields. */
  fields: Record<string, unknown>;
  /** Secret fields, opened. */
  secrets: Record<string, string | undefined>;
}

interface ConfigRow {
  name: string;
  enabled: number;
  settings: string;
  secrets: string;
}

export const secretNames = (adapter: ChannelAdapter): string[] => ['token', ...adapter.secretFields.filter((f) => f !== 'token')];

export class SettingsStore {
  constructor(
    private readonly store: Store,
    private readonly vault: () => SecretVault,
    private readonly config: () => ChannelsConfig,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  /** The channel's configuration, or undefined when it has none anywhere. */
  async get(adapter: ChannelAdapter): Promise<ChannelSettings | undefined> {
    const row = await this.store.one<ConfigRow>('SELECT name, enabled, settings, secrets FROM channels_config WHERE name = ?', [adapter.name]);
    if (row) {
      const values = JSON.parse(row.settings) as Record<string, unknown>;
      const sealed = JSON.parse(row.secrets) as Record<string, string>;
      const secrets: Record<string, string | undefined> = {};
      for (const name of secretNames(adapter)) if (sealed[name]) secrets[name] = this.vault().open(sealed[name], owner(adapter.name, name));
      return { source: 'api', enabled: row.enabled === 1, ...split(values), secrets };
    }
    const table = (this.config() as Record<string, unknown>)[adapter.name] as ChannelTable | undefined;
    if (!table || typeof table !== 'object') return undefined;
    const secrets: Record<string, string | undefined> = {};
    for (const name of secretNames(adapter)) {
      const variable = table[`${name}_env`];
      if (typeof variable === 'string' && this.env[variable]) secrets[name] = this.env[variable];
    }
    const values = Object.fromEntries(Object.entries(table).filter(([k]) => k !== 'enabled' && !k.endsWith('_env')));
    return { source: 'config', enabled: table.enabled !== false, ...split(values), secrets };
  }

  /**
   * Writes the API configuration: `values` holds the common and adapter fields, `secrets` the secret fields given
   * (a secret not given keeps its stored value).
   */
  async put(adapter: ChannelAdapter, values: Record<string, unknown>, secrets: Record<string, string>): Promise<void> {
    const now = Date.now();
    await this.store.tx(async (t) => {
      const row = await t.one<ConfigRow>('SELECT name, enabled, settings, secrets FROM channels_config WHERE name = ?', [adapter.name]);
      const sealed = row ? (JSON.parse(row.secrets) as Record<string, string>) : {};
      for (const [name, plain] of Object.entries(secrets)) sealed[name] = this.vault().seal(plain, owner(adapter.name, name));
      await t.run(
        `INSERT INTO channels_config (name, enabled, settings, secrets, updated_at) VALUES (?, 1, ?, ?, ?)
         ON CONFLICT (name) DO UPDATE SET settings = excluded.settings, secrets = excluded.secrets, updated_at = excluded.updated_at`,
        [adapter.name, JSON.stringify(values), JSON.stringify(sealed), now],
      );
    });
  }

  /** Removes the API configuration; resolves false when there was none. */
  async remove(name: string): Promise<boolean> {
    return (await this.store.run('DELETE FROM channels_config WHERE name = ?', [name])).changes > 0;
  }

  /** Flips `enabled`, keeping the configuration; a channel configured only in config.toml gets a row copying it. */
  async setEnabled(adapter: ChannelAdapter, enabled: boolean): Promise<boolean> {
    const current = await this.get(adapter);
    if (!current) return false;
    if (current.source === 'config') {
      await this.put(adapter, { ...current.common, ...current.fields }, definedOnly(current.secrets));
    }
    await this.store.run('UPDATE channels_config SET enabled = ?, updated_at = ? WHERE name = ?', [enabled ? 1 : 0, Date.now(), adapter.name]);
    return true;
  }
}

/** The vault owner of a channel's secret: a sealed value moved to another channel or field does not open. */
const owner = (channel: string, field: string) => `channels:${field}:${channel}`;

function definedOnly(values: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

function split(values: Record<string, unknown>): { common: CommonSettings; fields: Record<string, unknown> } {
  const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  const text = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
  const common: CommonSettings = {
    agent_name: text(values.agent_name),
    dm_policy: (text(values.dm_policy) as DmPolicy | undefined) ?? 'pairing',
    group_policy: (text(values.group_policy) as GroupPolicy | undefined) ?? 'mention',
    allowed_users: strings(values.allowed_users),
    default_conversation: text(values.default_conversation),
    owners: strings(values.owners),
    message_coalesce_window_ms: typeof values.message_coalesce_window_ms === 'number' ? values.message_coalesce_window_ms : 0,
  };
  const fields = Object.fromEntries(Object.entries(values).filter(([k]) => !(COMMON_FIELDS as readonly string[]).includes(k)));
  return { common, fields };
}
