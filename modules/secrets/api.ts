/**
 * Contract of the secrets module (`@talon/secrets`): the vault every module seals its secrets at rest with, and the
 * stored provider keys. It depends on no other module, so any module (a channel adapter, a media driver) can keep a
 * secret without pulling in the model catalogue.
 */
import { serviceRef } from '@talon/module-sdk';

/**
 * AES-256-GCM sealing with the key in $TALON_HOME/secret.key (or TALON_SECRET_KEY_FILE), for secrets modules keep at
 * rest (TOTP secrets, webhook signing secrets, MCP server environments). `owner` binds a sealed value to its row: use
 * '<module>:<what>:<id>' so it can never be confused with a provider name (provider keys are sealed under it).
 */
export interface SecretVault {
  seal(plain: string, owner: string): string;
  /** Throws when the value was not sealed for this owner with this key. */
  open(sealed: string, owner: string): string;
}

export const secretVault = serviceRef<SecretVault>('secrets.vault');

/**
 * API keys of model providers, sealed in the database and held decrypted in memory (get is a map read). A change is
 * effective at once in this process and within about a quarter of a second in the others of the home.
 */
export interface ProviderKeys {
  /** The stored key, by the provider's canonical name; undefined when none is stored. */
  get(provider: string): string | undefined;
  set(provider: string, key: string): Promise<void>;
  /** False when no key was stored. */
  delete(provider: string): Promise<boolean>;
}

export const providerKeys = serviceRef<ProviderKeys>('secrets.provider-keys');
