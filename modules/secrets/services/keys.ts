/**
 * Stored provider keys: sealed in secrets_provider_keys (each under its provider's name as owner), held decrypted in
 * memory so get() is a map read and a change is effective at once. A change is noted (topic 'keys'): the other
 * processes of the home load the keys again.
 */
import type { Logger } from 'pino';
import type { ChangeFeed, Store } from '@talon/module-sdk';
import type { ProviderKeys } from '../api.ts';
import type { SecretBox } from './box.ts';

export const KEYS_TOPIC = 'keys';

export class KeyStore implements ProviderKeys {
  private keys = new Map<string, string>();
  /** Loads one after another: a load that read older rows never lands after one that read newer. */
  private loading: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly changes: ChangeFeed,
    private readonly box: SecretBox,
    private readonly log: Logger,
  ) {}

  load(): Promise<void> {
    const next = this.loading.then(() => this.read());
    this.loading = next.catch(() => undefined);
    return next;
  }

  private async read(): Promise<void> {
    const rows = await this.store.many<{ provider: string; ciphertext: string }>('SELECT provider, ciphertext FROM secrets_provider_keys');
    const keys = new Map<string, string>();
    for (const row of rows) {
      try {
        keys.set(row.provider, this.box.open(row.ciphertext, row.provider));
      } catch (err) {
        this.log.warn(`stored key of provider '${row.provider}' cannot be decrypted (${(err as Error).message}); it is ignored`);
      }
    }
    this.keys = keys;
  }

  get(provider: string): string | undefined {
    return this.keys.get(provider);
  }

  async set(provider: string, key: string): Promise<void> {
    const sealed = this.box.seal(key, provider);
    await this.store.tx(async (t) => {
      await t.run(
        'INSERT INTO secrets_provider_keys (provider, ciphertext, updated_at) VALUES (?, ?, ?) ON CONFLICT (provider) DO UPDATE SET ciphertext = excluded.ciphertext, updated_at = excluded.updated_at',
        [provider, sealed, new Date().toISOString()],
      );
      await this.changes.note(KEYS_TOPIC, provider, t);
    });
    this.keys.set(provider, key);
  }

  /** False when no key was stored. */
  async delete(provider: string): Promise<boolean> {
    const removed = await this.store.tx(async (t) => {
      const { changes } = await t.run('DELETE FROM secrets_provider_keys WHERE provider = ?', [provider]);
      if (changes) await this.changes.note(KEYS_TOPIC, provider, t);
      return changes > 0;
    });
    return this.keys.delete(provider) || removed;
  }
}
