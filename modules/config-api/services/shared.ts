/**
 * Configuration changes shared by the processes on one database. A fleet's nodes each keep a config.toml of their
 * own; a value set through the API on one node is recorded (the newest per key path) and every other node applies it
 * to its own file and running configuration, at once through the change feed, or at its next start when it was down
 * — unless its file was written after the change (an operator's rolling update of the files wins over older API
 * changes). Where a node listens, and which database it uses, are its own and never shared. A value holding a secret
 * is sealed in the vault; without the secrets module it stays on the node that set it.
 */
import { statSync } from 'node:fs';
import type { Logger } from 'pino';
import { redactSecrets, type ChangeFeed, type Store } from '@talon/module-sdk';
import type { SecretVault } from '@talon/secrets';
import { setIn } from './toml.ts';

/** The change-feed topic of config_api_changes. */
const TOPIC = 'changes';
/** Top-level keys that belong to one node (its listen address, its database connection). */
const NODE_KEYS = new Set(['api_listen', 'listen_addr', 'database']);

interface ChangeRow {
  seq: number;
  path: string;
  value: string;
  sealed: number;
  /** Epoch ms of the change. */
  at: number;
}

export interface SharedDeps {
  store: Store;
  changes: ChangeFeed;
  node: string;
  /** The node's config.toml: its modification time tells which recorded changes it has not seen. */
  file: string;
  vault: () => SecretVault | undefined;
  /** Applies a change made on another node here (validated, written to the file, applied; never shared again). */
  apply: (path: string, value: unknown) => Promise<unknown>;
  log: Logger;
}

export class SharedChanges {
  /** The changes of other nodes applied here (or found already in the file at start), by seq. */
  private readonly seen = new Set<number>();
  /** Passes run one after another (see pass), so changes apply in the order they were made. */
  private syncing: Promise<void> = Promise.resolve();

  constructor(private readonly deps: SharedDeps) {}

  /** Records a change made here through the API, replacing the older change of the same path. */
  async record(path: string, value: unknown): Promise<void> {
    const { store, changes, vault, node, log } = this.deps;
    if (NODE_KEYS.has(path.split('.')[0]!)) return;
    const json = JSON.stringify(value);
    const secret = holdsSecret(path, value);
    const box = secret ? vault() : undefined;
    if (secret && !box) {
      log.warn({ path }, 'a secret configuration value stays on this node: without the secrets module it is not shared');
      return;
    }
    const stored = box ? box.seal(json, owner(path)) : json;
    await store.tx(async (t) => {
      await t.run('DELETE FROM config_api_changes WHERE path = ?', [path]);
      const row = await t.one<{ seq: number }>('INSERT INTO config_api_changes (path, value, sealed, node, at) VALUES (?, ?, ?, ?, ?) RETURNING seq', [
        path,
        stored,
        box ? 1 : 0,
        node,
        Date.now(),
      ]);
      await changes.note(TOPIC, String(row!.seq), t);
    });
  }

  /**
   * At start: follows the change feed, and applies the other nodes' changes newer than this node's file (those older
   * are in it, or the file replaced them). Fails when the table cannot be read.
   */
  async start(): Promise<void> {
    const written = statSync(this.deps.file, { throwIfNoEntry: false })?.mtimeMs ?? 0;
    this.deps.changes.on(TOPIC, () => this.sync());
    await this.pass((row) => row.at <= written);
  }

  /** Applies the changes of other nodes not applied here yet, in the order they were made. */
  sync(): Promise<void> {
    return this.pass().catch((err: unknown) => this.deps.log.warn({ err }, "reading the other nodes' configuration changes failed"));
  }

  /** One pass after the one before: reads the other nodes' changes, counts those `inFile` as seen, applies the rest. */
  private pass(inFile?: (row: ChangeRow) => boolean): Promise<void> {
    const run = this.syncing.then(async () => {
      const rows = await this.deps.store.many<ChangeRow>('SELECT seq, path, value, sealed, at FROM config_api_changes WHERE node <> ? ORDER BY seq', [
        this.deps.node,
      ]);
      if (inFile) for (const row of rows) if (inFile(row)) this.seen.add(row.seq);
      await this.applyUnseen(rows);
    });
    this.syncing = run.catch(() => undefined);
    return run;
  }

  /** A change that does not apply here (a module this node lacks, say) is logged and not tried again. */
  private async applyUnseen(rows: readonly ChangeRow[]): Promise<void> {
    for (const row of rows) {
      if (this.seen.has(row.seq)) continue;
      this.seen.add(row.seq);
      try {
        await this.deps.apply(row.path, this.valueOf(row));
        this.deps.log.info({ path: row.path }, 'configuration change made on another node applied here');
      } catch (err) {
        this.deps.log.warn({ err, path: row.path }, 'a configuration change made on another node does not apply here');
      }
    }
  }

  private valueOf(row: ChangeRow): unknown {
    if (!row.sealed) return JSON.parse(row.value);
    const box = this.deps.vault();
    if (!box) throw new Error('the value is sealed and the secrets module is not running here');
    return JSON.parse(box.open(row.value, owner(row.path)));
  }
}

/** Whether setting `value` at `path` writes a secret (a key the configuration redacts, at the path or inside). */
function holdsSecret(path: string, value: unknown): boolean {
  const data = setIn({}, path.split('.'), value);
  return JSON.stringify(redactSecrets(data)) !== JSON.stringify(data);
}

const owner = (path: string) => `config-api:change:${path}`;
