-- PostgreSQL twin of ../0001_oidc.sql (docs/decisions-fleet.md maps the types).
-- dashboard sessions: only the SHA-256 of the cookie value is kept; the IdP access token is sealed by the vault
CREATE TABLE oidc_sessions (
  token_hash TEXT PRIMARY KEY,
  provider TEXT NOT NULL,
  sub TEXT NOT NULL,
  email TEXT,
  name TEXT,
  picture TEXT,
  profile TEXT NOT NULL,
  access_token TEXT,
  created_at TEXT NOT NULL,
  expires_at BIGINT NOT NULL
);
CREATE INDEX oidc_sessions_expiry ON oidc_sessions (expires_at);
