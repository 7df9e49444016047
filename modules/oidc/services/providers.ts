/**
 * The configured providers and their discovered metadata (cached for an hour; a failed discovery is not cached).
 * Every request to a provider goes through safe-fetch (SSRF rules); plain http is allowed only for issuers the
 * operator allow-listed (a provider on loopback in tests, a self-hosted one on the LAN).
 */
import { HttpError, notFound, lazyRequire } from '@talon/module-sdk';
import type * as Client from 'openid-client';
import type { NetFetch } from '@talon/net';
import type { OidcConfig, ProviderConfig } from '../config.ts';
import { safeFetch } from './safe-fetch.ts';

/** openid-client is loaded with the first sign-in or token check, not at start-up. */
const client = lazyRequire<typeof Client>(import.meta.url, 'openid-client');

const DISCOVERY_TTL_MS = 60 * 60 * 1000;

export class Providers {
  private readonly cache = new Map<string, { at: number; key: string; config: Promise<Client.Configuration> }>();

  constructor(
    private readonly config: () => OidcConfig,
    private readonly net: () => NetFetch,
  ) {}

  list(): ProviderConfig[] {
    return this.config().providers;
  }

  /** The named provider, or the default (first) one. */
  find(id: string | undefined): ProviderConfig {
    const providers = this.list();
    if (!providers.length) throw notFound('no sign-in provider is configured: add one to [oidc] providers (see docs/auth.md)');
    const provider = id === undefined ? providers[0] : providers.find((p) => p.id === id);
    if (!provider) throw notFound(`sign-in provider '${id}' is not configured`);
    return provider;
  }

  async client(provider: ProviderConfig): Promise<Client.Configuration> {
    const key = JSON.stringify(provider);
    const hit = this.cache.get(provider.id);
    if (hit && hit.key === key && Date.now() - hit.at < DISCOVERY_TTL_MS) return hit.config;
    const config = this.discover(provider);
    this.cache.set(provider.id, { at: Date.now(), key, config });
    config.catch(() => this.cache.delete(provider.id));
    return config;
  }

  private async discover(provider: ProviderConfig): Promise<Client.Configuration> {
    const secret = provider.client_secret || (provider.client_secret_env ? (process.env[provider.client_secret_env] ?? '') : '');
    const fetcher = safeFetch(this.net, () => this.config().allow_hosts);
    const insecure = new URL(provider.issuer_url).protocol === 'http:';
    try {
      const config = await client().discovery(
        new URL(provider.issuer_url),
        provider.client_id,
        secret || undefined,
        secret ? client().ClientSecretPost(secret) : client().None(),
        {
          [client().customFetch]: fetcher,
          execute: insecure ? [client().allowInsecureRequests] : [],
        },
      );
      config[client().customFetch] = fetcher;
      return config;
    } catch (err) {
      throw new HttpError(502, `discovery of '${provider.id}' at ${provider.issuer_url} failed: ${(err as Error).message}`);
    }
  }
}
