-- PostgreSQL twin of ../0001_backup.sql (docs/decisions-fleet.md maps the types).
-- A restore whose database part committed but whose folders are not all in place yet: finished at the next start.
CREATE TABLE backup_restore_journal (
  id TEXT PRIMARY KEY,
  staging TEXT NOT NULL,
  -- JSON array of the folder components (and 'config') still to move into place
  components TEXT NOT NULL,
  created_at TEXT NOT NULL
);
