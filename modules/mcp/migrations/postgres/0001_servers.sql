-- PostgreSQL twin of ../0001_servers.sql (docs/decisions-fleet.md maps the types).
-- MCP servers added through the API (servers of config.toml [[mcp_servers]] are not stored).
CREATE TABLE mcp_servers (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  template_id TEXT,
  -- {type, command, args, url, headers}: headers hold names only; their values are sealed in secrets.
  transport TEXT NOT NULL,
  -- sealed JSON object of environment variable (and header) values: never read back through the API
  secrets TEXT NOT NULL,
  timeout_secs BIGINT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
