CREATE TABLE bindings_rules (
  id INTEGER PRIMARY KEY,
  agent TEXT NOT NULL,
  -- JSON {channel?, account_id?, peer_id?, guild_id?, roles?}
  match_rule TEXT NOT NULL,
  created_at TEXT NOT NULL
);
