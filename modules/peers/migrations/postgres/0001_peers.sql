-- PostgreSQL twin of ../0001_peers.sql (docs/decisions-fleet.md maps the types).
-- identities pinned on first contact: a node that later shows another key is refused
CREATE TABLE peers_identities (
  node_id TEXT PRIMARY KEY,
  public_key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  address TEXT NOT NULL,
  first_seen TEXT NOT NULL,
  last_verified TEXT NOT NULL
);
