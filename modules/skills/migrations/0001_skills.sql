-- Evolution history of every skill: one row per content change (install, create, edit on disk).
CREATE TABLE skills_versions (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  version TEXT NOT NULL,
  timestamp TEXT NOT NULL,
  changelog TEXT NOT NULL,
  content_hash TEXT NOT NULL
);
CREATE INDEX skills_versions_name ON skills_versions (name, seq);

-- How often a skill's tools ran (and its prompt was read by a tool).
CREATE TABLE skills_usage (
  name TEXT PRIMARY KEY,
  use_count INTEGER NOT NULL DEFAULT 0
);

-- Where an installed skill came from (a folder copied in by hand has no row: local).
CREATE TABLE skills_origins (
  name TEXT PRIMARY KEY,
  origin TEXT NOT NULL,
  installed_at TEXT NOT NULL
);
