-- PostgreSQL twin of ../0001_pairing.sql (docs/decisions-fleet.md maps the types).
CREATE TABLE pairing_codes (
  code_hash TEXT PRIMARY KEY,
  expires_at BIGINT NOT NULL,
  created_at TEXT NOT NULL
);

CREATE TABLE pairing_devices (
  id TEXT PRIMARY KEY,
  display_name TEXT NOT NULL,
  platform TEXT NOT NULL,
  token_hash TEXT NOT NULL UNIQUE,
  push_token TEXT,
  role TEXT NOT NULL,
  paired_at TEXT NOT NULL,
  last_seen TEXT NOT NULL
);
