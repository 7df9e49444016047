-- PostgreSQL twin of ../0001_migrate.sql (docs/decisions-fleet.md maps the types).
-- What a migration imported, so a second run skips it (memory entries have no natural key to look up).
CREATE TABLE migrate_ledger (
  source TEXT NOT NULL,
  kind TEXT NOT NULL,
  name TEXT NOT NULL,
  imported_at TEXT NOT NULL,
  PRIMARY KEY (source, kind, name)
);
