/** Backups: create, list, delete, restore, and finishing a restore a crash interrupted. */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import Database, { type Database as Db } from 'better-sqlite3';
import type { Logger } from 'pino';
import {
  badRequest,
  conflict,
  notFound,
  type ConfigAccess,
  type EventChannel,
  type ModuleInfo,
  type NodeAccess,
  type Queries,
  type Store,
} from '@talon/module-sdk';
import type { AuditTrail } from '@talon/audit';
import type { backupEvents } from '@talon/backup';
import {
  ARCHIVE_NAME,
  COMPONENTS,
  DB_ENTRY,
  FOLDERS,
  PRESERVED_MODULES,
  TABLES_DIR,
  archivedEngine,
  isFolder,
  type Component,
  type Manifest,
} from './components.ts';
import { writeArchive, type DatabaseSnapshot } from './archive.ts';
import { partialFile, removeLeftovers, workFolder } from './leftovers.ts';
import { BadArchive, extractArchive } from './extract.ts';
import { configText, parseConfig, withCurrentSecrets, withoutSecrets } from './config-file.ts';
import { carryOver, copyDatabase } from './swap.ts';
import { applyPending, type Pending } from './folders.ts';
import { exportTables } from './pg-export.ts';
import { sqliteToTableFiles } from './sqlite-to-pg.ts';
import { planRestore, restoreTables } from './pg-restore.ts';
import type { RestorePlan } from './restore-plan.ts';
import { planSqliteRestore, restoreSqliteTables } from './sqlite-restore.ts';

export interface BackupDeps {
  store: Store;
  home: string;
  dataDir: string;
  moduleDir: string;
  version: string;
  backupsDir: () => string;
  config: ConfigAccess;
  audit: () => AuditTrail | undefined;
  events: EventChannel<typeof backupEvents>;
  /** This process and the live ones: a restore is refused while others run (their caches would go stale). */
  nodes: Pick<NodeAccess, 'id' | 'live'>;
  log: Logger;
  modules: () => ModuleInfo[];
  /** Restarts a module with its state read afresh (the kernel's reloadModule). */
  restart: (name: string) => Promise<{ ok: boolean; error?: string }>;
}

const stamp = (d: Date) => d.toISOString().replace(/[-:.]/g, '');

/** A row of backup_restore_journal: a restore past its commit point whose folders are not all in place yet. */
interface JournalRow {
  id: string;
  staging: string;
  components: string;
}

const JOURNAL_ROWS = 'SELECT id, staging, components FROM backup_restore_journal';
const JOURNAL_DELETE = 'DELETE FROM backup_restore_journal WHERE id = ?';
/** A journal row, held until the transaction ends (on SQLite the transaction's write lock holds it). */
const JOURNAL_HOLD = {
  sqlite: 'SELECT id FROM backup_restore_journal WHERE id = ?',
  postgres: 'SELECT id FROM backup_restore_journal WHERE id = ? FOR UPDATE',
};

export class Backups {
  private busy: string | undefined;

  constructor(private readonly d: BackupDeps) {}

  /** One backup or restore at a time. */
  private async exclusive<T>(what: string, work: () => Promise<T>): Promise<T> {
    if (this.busy) throw conflict(`a ${this.busy} is running; try again when it is done`);
    this.busy = what;
    try {
      return await work();
    } finally {
      this.busy = undefined;
    }
  }

  /** The SQLite file of the service's database (on SQLite only: PostgreSQL's tables go through the store). */
  private databaseFile(): string {
    return this.d.store.sqlite().name;
  }

  /**
   * A consistent snapshot of the database under `snapshot` (removed by the caller): on SQLite a copy of the file by
   * the online backup API in a worker, on PostgreSQL every table exported in one read-only transaction. Either way
   * the service keeps serving and writing meanwhile.
   */
  private async snapshotDatabase(snapshot: string): Promise<DatabaseSnapshot> {
    if (this.d.store.dialect === 'sqlite') {
      await copyDatabase(this.databaseFile(), snapshot, this.d.moduleDir);
      return { files: [{ name: DB_ENTRY, source: snapshot }], manifest: { engine: 'sqlite' } };
    }
    const tables = await exportTables(this.d.store, snapshot);
    return {
      files: tables.map((t) => ({ name: `${TABLES_DIR}/${t.file}`, source: path.join(snapshot, t.file) })),
      manifest: { engine: 'postgres', tables },
    };
  }

  archivePath(filename: string): string {
    if (!ARCHIVE_NAME.test(filename)) throw badRequest(`invalid backup filename '${filename}': expected a name like talon-backup-20260101T000000000Z.tar.gz`);
    const file = path.join(this.d.backupsDir(), filename);
    if (!existsSync(file)) throw notFound(`backup '${filename}' not found`);
    return file;
  }

  create(components: Component[] = [...COMPONENTS]) {
    return this.exclusive('backup', async () => {
      const dir = this.d.backupsDir();
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const now = new Date();
      let filename = `talon-backup-${stamp(now)}.tar.gz`;
      for (let n = 2; existsSync(path.join(dir, filename)); n++) filename = `talon-backup-${stamp(now)}-${n}.tar.gz`;
      mkdirSync(this.d.dataDir, { recursive: true });
      const snapshot = components.includes('database') ? workFolder(this.d.dataDir, 'snapshot', this.d.nodes.id) : undefined;
      try {
        const database = snapshot ? await this.snapshotDatabase(snapshot) : undefined;
        const file = path.join(dir, filename);
        const { sizeBytes, files, manifest } = await writeArchive({
          file,
          partial: partialFile(file, this.d.nodes.id),
          home: this.d.home,
          version: this.d.version,
          components,
          database,
          configText: components.includes('config') ? configText(withoutSecrets(this.d.config.read())) : undefined,
          warn: (message) => this.d.log.warn(message),
        });
        this.d.events.publish('backup.created', { filename, components, sizeBytes });
        return { filename, path: file, size_bytes: sizeBytes, components, files, created_at: manifest.created_at, service_version: manifest.service_version };
      } finally {
        if (snapshot) rmSync(snapshot, { recursive: true, force: true });
      }
    });
  }

  async list() {
    const dir = this.d.backupsDir();
    const names = existsSync(dir) ? (await readdir(dir)).filter((n) => ARCHIVE_NAME.test(n)) : [];
    const backups = await Promise.all(
      names.map(async (filename) => {
        const file = path.join(dir, filename);
        const info = await stat(file);
        const manifest = await extractArchive(file, undefined).then(
          (s) => s.manifest,
          () => undefined,
        );
        return {
          filename,
          path: file,
          size_bytes: info.size,
          modified_at: info.mtime.toISOString(),
          created_at: manifest?.created_at ?? null,
          components: manifest?.components ?? null,
          service_version: manifest?.service_version ?? null,
          format_version: manifest?.format_version ?? null,
          valid_manifest: Boolean(manifest),
        };
      }),
    );
    backups.sort((a, b) => b.filename.localeCompare(a.filename));
    return { backups, total: backups.length };
  }

  async remove(filename: string): Promise<void> {
    const file = this.archivePath(filename);
    await rm(file);
    this.d.events.publish('backup.deleted', { filename });
  }

  restore(filename: string, requested?: string[]) {
    const file = this.archivePath(filename);
    return this.exclusive('restore', async () => {
      await this.refuseIfOthersLive();
      const id = randomUUID();
      const staging = workFolder(this.d.dataDir, 'restore', this.d.nodes.id);
      try {
        const plan = await this.validate(file, staging, requested);
        const result = await this.commit(id, staging, plan.components, plan.config, plan.tables);
        this.d.events.publish('backup.restored', { filename, components: plan.components, files: plan.files, modulesRestarted: result.restarted });
        return {
          status: 'restored' as const,
          filename,
          components: plan.components,
          restored_files: plan.files,
          modules_restarted: result.restarted,
          warnings: result.warnings,
          manifest: plan.manifest,
        };
      } catch (err) {
        rmSync(staging, { recursive: true, force: true });
        const message = (err as Error).message;
        this.d.events.publish('backup.restore_failed', { filename, error: message });
        if (err instanceof BadArchive) throw badRequest(`invalid backup archive '${filename}': ${message}`);
        throw err;
      }
    });
  }

  /**
   * A restore replaces the database under every process on this home; another live one would keep serving its caches
   * of the old state and could write over the restored rows. So it runs only in the last process standing.
   */
  private async refuseIfOthersLive(): Promise<void> {
    const others = (await this.d.nodes.live()).filter((id) => id !== this.d.nodes.id).length;
    if (others === 0) return;
    const them = others === 1 ? '1 other process is' : `${others} other processes are`;
    throw conflict(`${them} running on this home; stop them first, then restore`);
  }

  /** Everything that can be wrong is found here, before anything of the service changes. */
  private async validate(file: string, staging: string, requested: string[] | undefined) {
    const staged = await extractArchive(file, staging);
    const components = (requested ?? staged.manifest.components) as Component[];
    const absent = components.filter((c) => !staged.manifest.components.includes(c));
    if (absent.length)
      throw badRequest(`the backup does not hold ${absent.map((c) => `'${c}'`).join(', ')} (it holds ${staged.manifest.components.join(', ')})`);
    let config: Record<string, unknown> | undefined;
    if (components.includes('config')) {
      const text = readFileSync(path.join(staging, 'files', 'config', 'config.toml'), 'utf8');
      try {
        config = withCurrentSecrets(parseConfig(text), this.d.config.read());
        this.d.config.check(config);
      } catch (err) {
        throw new BadArchive(`its config.toml is not valid here: ${(err as Error).message}`);
      }
    }
    const tables = components.includes('database') ? await this.checkArchivedDatabase(staged.manifest, path.join(staging, 'files')) : undefined;
    return { components, config, tables, files: staged.files.size, manifest: staged.manifest };
  }

  /**
   * The archived database can replace this one: sound, ours, and of this schema. Across the engines it is converted:
   * a SQLite file into table files on PostgreSQL (one machine moving onto a fleet), PostgreSQL's table files into this
   * SQLite database's tables (a fleet back onto one machine). Answers the plan of the tables to restore, or nothing
   * when a SQLite file replaces this one whole.
   */
  private async checkArchivedDatabase(manifest: Manifest, files: string): Promise<RestorePlan | undefined> {
    const here = this.d.store.dialect;
    if (archivedEngine(manifest) === 'postgres') return (here === 'sqlite' ? planSqliteRestore : planRestore)(this.d.store, files, manifest, PRESERVED_MODULES);
    checkDatabase(path.join(files, DB_ENTRY));
    if (here === 'sqlite') return undefined;
    const tables = await sqliteToTableFiles(path.join(files, DB_ENTRY), files, this.d.store);
    return planRestore(this.d.store, files, { ...manifest, database: { engine: 'postgres', tables } }, PRESERVED_MODULES);
  }

  /**
   * The commit point is the journal row: with the database, inside the swapped database (SQLite) or the transaction
   * that replaces the tables (PostgreSQL); without, a plain insert.
   */
  private async commit(id: string, staging: string, components: Component[], config: Record<string, unknown> | undefined, tables: RestorePlan | undefined) {
    const pending: Pending = { id, staging, components: components.filter((c) => c !== 'database') };
    const warnings: string[] = [...(tables?.warnings ?? [])];
    const release = await this.d.audit()?.hold();
    try {
      if (tables) {
        // The store may run the work twice (a lost race): its warnings are taken from the run that committed.
        const cascaded = await this.d.store.tx(async (t) => {
          const emptied = await (t.dialect === 'sqlite' ? restoreSqliteTables : restoreTables)(t, tables);
          await insertJournal(t, pending);
          return emptied;
        });
        warnings.push(...cascaded);
      } else if (components.includes('database')) {
        const stagedDb = path.join(staging, 'files', DB_ENTRY);
        const live = this.databaseFile();
        carryOver(live, stagedDb, PRESERVED_MODULES, pending);
        await copyDatabase(stagedDb, live, this.d.moduleDir);
      } else {
        await insertJournal(this.d.store, pending);
      }
    } finally {
      release?.();
    }
    await this.finish(pending);
    if (config) await this.d.config.apply(config, '');
    const restarted = await this.restartModules(components, warnings);
    return { restarted, warnings };
  }

  /**
   * Moves the folders of a restore in place and closes its journal entry, in one transaction holding the entry: a
   * process starting meanwhile recovers interrupted restores under the same hold (SQLite's write lock, PostgreSQL's row
   * lock), so it waits, then finds the entry gone, and the folders are never moved by two processes at once. The
   * staging folder is removed after the commit by the process that placed it (what a crash leaves goes with the
   * leftovers). Answers the config placed, or undefined when another process had finished the entry.
   */
  private async finish(pending: Pending): Promise<{ config?: Record<string, unknown> } | undefined> {
    const placed = await this.d.store.tx(async (t) => {
      if (!(await t.one(t.pick(JOURNAL_HOLD), [pending.id]))) return undefined;
      const done = this.moveIn(pending);
      await t.run(JOURNAL_DELETE, [pending.id]);
      return done;
    });
    if (placed) rmSync(pending.staging, { recursive: true, force: true });
    return placed;
  }

  /** Moves a restore's folders (and config) from its staging folder into place. */
  private moveIn(pending: Pending): { config?: Record<string, unknown> } {
    return applyPending(pending, this.d.home, { file: this.d.config.file, current: () => this.d.config.read() });
  }

  /** Modules that hold state read from what was restored start again, so they serve it at once. */
  private async restartModules(components: Component[], warnings: string[]): Promise<string[]> {
    const wanted = new Set<string>();
    if (components.includes('database')) {
      for (const r of await this.d.store.many<{ module: string }>('SELECT DISTINCT module FROM kernel_migrations')) wanted.add(r.module);
    }
    for (const c of components) if (isFolder(c)) wanted.add(FOLDERS[c].owner);
    const running = this.d.modules().filter((m) => m.state === 'running' && wanted.has(m.id) && !PRESERVED_MODULES.includes(m.id));
    const restarted: string[] = [];
    for (const m of running) {
      const outcome = await this.d.restart(m.id);
      if (outcome.ok) restarted.push(m.id);
      else warnings.push(`module '${m.id}' did not restart: ${outcome.error ?? 'unknown error'}`);
    }
    return restarted;
  }

  /**
   * At start, before any module starts: a restore a crash interrupted after its commit point is finished (its folders
   * moved in place), staging left before it is removed. It must precede every module's start() (they read the folders
   * it moves), and the kernel registers every module before it starts any: so on SQLite this runs in register(), on
   * the raw connection (synchronous; inside the kernel's staging transaction, whose write lock holds the journal as
   * finish does). See recoverLater for other engines.
   */
  recoverNow(db: Db): { finished: string[]; config?: Record<string, unknown> } {
    const finished: string[] = [];
    let config: Record<string, unknown> | undefined;
    for (const row of db.prepare(JOURNAL_ROWS).all() as JournalRow[]) {
      const pending = pendingOf(row);
      config = this.moveIn(pending).config ?? config;
      db.prepare(JOURNAL_DELETE).run(row.id);
      rmSync(pending.staging, { recursive: true, force: true });
      finished.push(row.id);
    }
    return { finished, config };
  }

  /** The same through the store, in start(): modules that started before this one may have read the folders already. */
  async recoverLater(): Promise<{ finished: string[]; config?: Record<string, unknown> }> {
    const finished: string[] = [];
    let config: Record<string, unknown> | undefined;
    for (const row of await this.d.store.many<JournalRow>(JOURNAL_ROWS)) {
      const placed = await this.finish(pendingOf(row));
      if (!placed) continue;
      config = placed.config ?? config;
      finished.push(row.id);
    }
    return { finished, config };
  }

  /** At start: the work files of backups and restores that no live process is doing (their processes are gone). */
  async removeLeftovers(): Promise<string[]> {
    const live = new Set(await this.d.nodes.live());
    return this.sweep((owner) => owner === undefined || !live.has(owner));
  }

  /** The work files of a node just found dead: its backup or restore will never finish. */
  removeLeftoversOf(node: string): string[] {
    return this.sweep((owner) => owner === node);
  }

  private sweep(gone: (owner: string | undefined) => boolean): string[] {
    return removeLeftovers({ dataDir: this.d.dataDir, backupsDir: this.d.backupsDir() }, gone);
  }
}

const pendingOf = (row: JournalRow): Pending => ({ id: row.id, staging: row.staging, components: JSON.parse(row.components) as string[] });

async function insertJournal(store: Queries, p: Pending): Promise<void> {
  await store.run('INSERT INTO backup_restore_journal (id, staging, components, created_at) VALUES (?, ?, ?, ?)', [
    p.id,
    p.staging,
    JSON.stringify(p.components),
    new Date().toISOString(),
  ]);
}

/** The archived database opens, passes SQLite's quick check and is one of ours. */
function checkDatabase(file: string): void {
  let db: Db | undefined;
  try {
    db = new Database(file, { fileMustExist: true });
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new BadArchive(`its database fails SQLite's check: ${String(check)}`);
    const ledger = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'kernel_migrations'`).get();
    if (!ledger) throw new BadArchive('its database is not a Talon database');
  } catch (err) {
    if (err instanceof BadArchive) throw err;
    throw new BadArchive(`its database cannot be opened: ${(err as Error).message}`);
  } finally {
    db?.close();
  }
}
