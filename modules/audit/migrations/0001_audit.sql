-- The chain: append-only; hash = SHA-256 over prev_hash and the entry's canonical encoding (services/chain.ts).
CREATE TABLE audit_entries (
  id INTEGER PRIMARY KEY,
  timestamp TEXT NOT NULL,
  event_type TEXT NOT NULL,
  agent_id TEXT,
  details TEXT NOT NULL,
  outcome TEXT NOT NULL,
  prev_hash TEXT NOT NULL,
  hash TEXT NOT NULL
);
CREATE INDEX audit_entries_type ON audit_entries (event_type, id);
CREATE INDEX audit_entries_agent ON audit_entries (agent_id, id);

-- The tip as last written, in the same transaction as the entries: a truncated tail no longer matches it.
CREATE TABLE audit_tip (
  one INTEGER PRIMARY KEY CHECK (one = 1),
  last_id INTEGER NOT NULL,
  last_hash TEXT NOT NULL
);
