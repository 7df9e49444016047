/**
 * WhatsApp Web's auth state in the service's store (channel_whatsapp_auth), so a restart reconnects without a new QR
 * code: the credentials (`creds`), a backup of them written after each connection that opened (`creds.backup`, read
 * when `creds` cannot be opened or parsed, the way a creds.json.bak saves a file store), and the Signal keys
 * (`key:<type>:<id>`). Values are Baileys' BufferJSON text sealed with the vault, so a copy of the database alone does
 * not give the account away.
 *
 * Writes belong to one sign-in: `replace` (a new QR sign-in) and `clear` (logged out) start a new generation, and a
 * writer of an earlier one (the connection still running on the old device) writes nothing more, so it cannot put an
 * old account's credentials back over the new ones.
 */
import type { Queries, Store } from '@talon/module-sdk';
import type { SecretVault } from '@talon/secrets';
import type { WaAuthState, WaCreds, WaKeyStore } from '@talon/channel-whatsapp';
import type { WaCodec } from './baileys.ts';

const CREDS = 'creds';
const BACKUP = 'creds.backup';
const keyRow = (type: string, id: string) => `key:${type}:${id}`;
const owner = (key: string) => `channel-whatsapp:auth:${key}`;

export interface AuthDeps {
  store: () => Store;
  vault: () => SecretVault;
  codec: WaCodec;
  log: { warn(obj: object, msg?: string): void };
}

/** A writer of one sign-in's state: what a socket saves through. */
export interface AuthWriter {
  /** The state a socket signs in with: `creds` saved by `saveCreds`, keys written through to the store. */
  state: WaAuthState;
  saveCreds(): Promise<void>;
  /** Copies the credentials to the backup row (the connection opened with them). */
  backup(): Promise<void>;
}

export class AuthStore {
  private generation = 0;
  /** Writes one after another, in the order they were made (Baileys fires creds.update in bursts). */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly channel: string,
    private readonly deps: AuthDeps,
  ) {}

  /** The stored state, or undefined when the channel has no signed-in account. */
  async load(): Promise<AuthWriter | undefined> {
    const creds = (await this.read(CREDS)) ?? (await this.fromBackup());
    if (!creds?.me) return undefined;
    return this.writer(creds as WaCreds, this.generation);
  }

  /** A new sign-in's complete state (its credentials and the keys it made) in place of whatever was stored. */
  async replace(creds: WaCreds, keys: ReadonlyMap<string, unknown>): Promise<void> {
    this.generation++;
    const now = Date.now();
    const rows: Array<[string, string]> = [
      [CREDS, this.seal(CREDS, creds)],
      [BACKUP, this.seal(BACKUP, creds)],
      ...[...keys].map(([key, value]) => [key, this.seal(key, value)] as [string, string]),
    ];
    await this.serial(() =>
      this.deps.store().tx(async (t) => {
        await t.run('DELETE FROM channel_whatsapp_auth WHERE channel = ?', [this.channel]);
        for (const [key, value] of rows) await insert(t, this.channel, key, value, now);
      }),
    );
  }

  /** Forgets the account (logged out): every row of the channel. */
  async clear(): Promise<void> {
    this.generation++;
    await this.serial(() => this.deps.store().run('DELETE FROM channel_whatsapp_auth WHERE channel = ?', [this.channel]));
  }

  /** The key name a Signal key is stored under (for a sign-in's keys kept in memory until it is authenticated). */
  static keyName = keyRow;

  private writer(creds: WaCreds, generation: number): AuthWriter {
    const live = () => generation === this.generation;
    const write = (key: string, value: unknown) => (live() ? this.put(key, value) : Promise.resolve());
    const keys: WaKeyStore = {
      get: (type, ids) => this.readKeys(type, ids),
      set: async (data) => {
        if (!live()) return;
        const now = Date.now();
        const writes = Object.entries(data).flatMap(([type, byId]) => Object.entries(byId).map(([id, value]) => [keyRow(type, id), value] as const));
        const sealed = writes.map(([key, value]) => [key, value === null || value === undefined ? undefined : this.seal(key, value)] as const);
        await this.serial(() =>
          this.deps.store().tx(async (t) => {
            for (const [key, value] of sealed)
              if (value === undefined) await t.run('DELETE FROM channel_whatsapp_auth WHERE channel = ? AND key = ?', [this.channel, key]);
              else await insert(t, this.channel, key, value, now);
          }),
        );
      },
    };
    return { state: { creds, keys }, saveCreds: () => write(CREDS, creds), backup: () => write(BACKUP, creds) };
  }

  private async fromBackup(): Promise<Record<string, unknown> | undefined> {
    const creds = await this.read(BACKUP);
    if (!creds) return undefined;
    this.deps.log.warn({ channel: this.channel }, 'whatsapp web: the stored credentials could not be read; signing in with their backup');
    // The main row is written again from the backup: the next start finds it whole.
    await this.put(CREDS, creds);
    return creds;
  }

  /** A row opened and parsed, or undefined when it is missing or cannot be (wrong key, cut, not JSON). */
  private async read(key: string): Promise<Record<string, unknown> | undefined> {
    const row = await this.deps.store().one<{ value: string }>('SELECT value FROM channel_whatsapp_auth WHERE channel = ? AND key = ?', [this.channel, key]);
    if (!row) return undefined;
    try {
      const value = this.deps.codec.parse(this.deps.vault().open(row.value, owner(key)));
      return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
    } catch (err) {
      this.deps.log.warn({ channel: this.channel, key, err: (err as Error).message }, 'whatsapp web: a stored auth value could not be read');
      return undefined;
    }
  }

  private async readKeys(type: string, ids: string[]): Promise<Record<string, unknown>> {
    const out: Record<string, unknown> = {};
    if (!ids.length) return out;
    const names = ids.map((id) => keyRow(type, id));
    const rows = await this.deps
      .store()
      .many<{ key: string; value: string }>(`SELECT key, value FROM channel_whatsapp_auth WHERE channel = ? AND key IN (${names.map(() => '?').join(', ')})`, [
        this.channel,
        ...names,
      ]);
    const byKey = new Map(rows.map((r) => [r.key, r.value]));
    for (const id of ids) {
      const sealed = byKey.get(keyRow(type, id));
      if (sealed === undefined) continue;
      try {
        out[id] = this.deps.codec.revive(type, this.deps.codec.parse(this.deps.vault().open(sealed, owner(keyRow(type, id)))));
      } catch (err) {
        // A key that cannot be read is one Baileys does not have: it renegotiates that session.
        this.deps.log.warn({ channel: this.channel, type, err: (err as Error).message }, 'whatsapp web: a stored key could not be read');
      }
    }
    return out;
  }

  private seal(key: string, value: unknown): string {
    return this.deps.vault().seal(this.deps.codec.stringify(value), owner(key));
  }

  private put(key: string, value: unknown): Promise<void> {
    const sealed = this.seal(key, value);
    return this.serial(() => insert(this.deps.store(), this.channel, key, sealed, Date.now()));
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }
}

async function insert(q: Queries, channel: string, key: string, value: string, now: number): Promise<void> {
  await q.run(
    'INSERT INTO channel_whatsapp_auth (channel, key, value, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (channel, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at',
    [channel, key, value, now],
  );
}
