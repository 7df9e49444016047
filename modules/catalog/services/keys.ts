import { prepared } from '@talon/module-sdk';
/**
 * Stored provider keys: sealed in catalog_provider_keys, held decrypted in
 * memory so apiKey() is a map read and a change is effective at once.
 */
import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import type { SecretBox } from './secrets.ts';

export class KeyStore {
  private readonly keys = new Map<string, string>();

  constructor(
    private readonly db: Database,
    private readonly box: SecretBox,
    private readonly log: Logger,
  ) {}

  load(): void {
    this.keys.clear();
    const rows = prepared(this.db, 'SELECT provider, ciphertext FROM catalog_provider_keys').all() as Array<{ provider: string; ciphertext: string }>;
    for (const row of rows) {
      try {
        this.keys.set(row.provider, this.box.open(row.ciphertext, row.provider));
      } catch (err) {
        this.log.warn(`stored key of provider '${row.provider}' cannot be decrypted (${(err as Error).message}); it is ignored`);
      }
    }
  }

  get(provider: string): string | undefined {
    return this.keys.get(provider);
  }

  set(provider: string, key: string): void {
    const sealed = this.box.seal(key, provider);
    prepared(
      this.db,
      'INSERT INTO catalog_provider_keys (provider, ciphertext, updated_at) VALUES (?, ?, ?) ON CONFLICT(provider) DO UPDATE SET ciphertext = excluded.ciphertext, updated_at = excluded.updated_at',
    ).run(provider, sealed, new Date().toISOString());
    this.keys.set(provider, key);
  }

  /** False when no key was stored. */
  delete(provider: string): boolean {
    const removed = prepared(this.db, 'DELETE FROM catalog_provider_keys WHERE provider = ?').run(provider).changes > 0;
    return this.keys.delete(provider) || removed;
  }
}
