-- The configuration changes made through the API, for the other processes on the database (a fleet's nodes, each
-- with a config.toml of its own): each applies the others' to its file and its running configuration. The newest
-- change of each key path is kept. `value` is JSON, sealed in the vault when it holds a secret.
CREATE TABLE config_api_changes (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  path TEXT NOT NULL,
  value TEXT NOT NULL,
  sealed INTEGER NOT NULL DEFAULT 0,
  node TEXT NOT NULL,
  at INTEGER NOT NULL
);
CREATE UNIQUE INDEX config_api_changes_path ON config_api_changes (path);
