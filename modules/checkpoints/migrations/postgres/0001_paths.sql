-- PostgreSQL twin of ../0001_paths.sql (docs/decisions-fleet.md maps the types; WITHOUT ROWID has no counterpart).
-- Paths (relative to the working directory) that file_write / apply_patch touched: the only files a shadow repository
-- tracks. Kept outside the shadow folder so a broken folder loses no pending path.
CREATE TABLE checkpoints_paths (
  work_dir TEXT NOT NULL,
  path TEXT NOT NULL,
  first_seen TEXT NOT NULL,
  PRIMARY KEY (work_dir, path)
);
