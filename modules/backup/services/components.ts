/** What an archive can hold. Folder components are copied whole; database and config are handled apart. */
import path from 'node:path';

export const FOLDERS = {
  workspaces: { dir: 'workspaces', owner: 'agents' },
  skills: { dir: 'skills', owner: 'skills' },
  hands: { dir: 'hands', owner: 'hands' },
  plugins: { dir: 'plugins', owner: 'plugins' },
  uploads: { dir: path.join('data', 'agents', 'uploads'), owner: 'agents' },
  checkpoints: { dir: path.join('data', 'checkpoints'), owner: 'checkpoints' },
} as const;

export type FolderComponent = keyof typeof FOLDERS;
export const COMPONENTS = ['database', 'config', ...(Object.keys(FOLDERS) as FolderComponent[])] as const;
export type Component = (typeof COMPONENTS)[number];

export const isFolder = (c: string): c is FolderComponent => Object.hasOwn(FOLDERS, c);

/** Modules whose tables a restore keeps as they are: the audit trail must survive a restore (and record it). */
export const PRESERVED_MODULES = ['audit', 'backup'];

/** A module's tables start with its id, '-' written '_' (docs/modules.md). */
export const tablePrefix = (module: string): string => `${module.replace(/-/g, '_')}_`;

export const FORMAT = 'talon-backup';
export const FORMAT_VERSION = 1;
export const MANIFEST = 'manifest.json';
export const CHECKSUMS = 'checksums.json';
export const DB_ENTRY = 'database/talon.db';
/** On PostgreSQL the database part is one file per table here (services/pg-export.ts). */
export const TABLES_DIR = 'database/tables';

export type Engine = 'sqlite' | 'postgres';

/** A table of a PostgreSQL archive: its file under TABLES_DIR and how many rows it holds. */
export interface TableEntry {
  name: string;
  file: string;
  rows: number;
}

/** What the database part is: a SQLite file, or PostgreSQL's tables. */
export interface DatabaseManifest {
  engine: Engine;
  /** PostgreSQL only: every table of the schema, as exported. */
  tables?: TableEntry[];
}
export const CONFIG_ENTRY = 'config/config.toml';

export interface Manifest {
  format: typeof FORMAT;
  format_version: number;
  service_version: string;
  created_at: string;
  components: Component[];
  /** The entry, last in the archive, that holds the SHA-256 of every file (written once they were read). */
  checksums: typeof CHECKSUMS;
  /** How secrets were handled (docs/operations.md). */
  secrets: 'excluded';
  /** With the database component. Archives written before it was added hold a SQLite database. */
  database?: DatabaseManifest;
}

/** The engine that made an archive's database part. */
export const archivedEngine = (m: Manifest): Engine => m.database?.engine ?? 'sqlite';

export interface Checksums {
  files: Record<string, { size: number; sha256: string }>;
}

/** Archive file names: made by us, so anything else is refused (no paths, no traversal). */
export const ARCHIVE_NAME = /^talon-backup-[0-9]{8}T[0-9]{9}Z(-[0-9]+)?\.tar\.gz$/;
