/**
 * Stored provider keys: sealed in catalog_provider_keys, held decrypted in memory so apiKey() is a map read and a
 * change is effective at once. A change is noted (topic 'keys'): the other processes of the home load the keys again.
 */
import type { Logger } from 'pino';
import type { ChangeFeed, Store } from '@talon/module-sdk';
import type { SecretBox } from './secrets.ts';

export const KEYS_TOPIC = 'keys';

export class KeyStore {
  private keys = new Map<string, string>();

  constructor(
    private readonly store: Store,
    private readonly changes: ChangeFeed,
    private readonly box: SecretBox,
    private readonly log: Logger,
  ) {}

  async load(): Promise<void> {
    const rows = await this.store.many<{ provider: string; ciphertext: string }>('SELECT provider, ciphertext FROM catalog_provider_keys');
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
        'INSERT INTO catalog_provider_keys (provider, ciphertext, updated_at) VALUES (?, ?, ?) ON CONFLICT (provider) DO UPDATE SET ciphertext = excluded.ciphertext, updated_at = excluded.updated_at',
        [provider, sealed, new Date().toISOString()],
      );
      await this.changes.note(KEYS_TOPIC, provider, t);
    });
    this.keys.set(provider, key);
  }

  /** False when no key was stored. */
  async delete(provider: string): Promise<boolean> {
    const removed = await this.store.tx(async (t) => {
      const { changes } = await t.run('DELETE FROM catalog_provider_keys WHERE provider = ?', [provider]);
      if (changes) await this.changes.note(KEYS_TOPIC, provider, t);
      return changes > 0;
    });
    return this.keys.delete(provider) || removed;
  }
}
