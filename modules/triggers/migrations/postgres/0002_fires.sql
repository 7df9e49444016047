-- PostgreSQL twin of ../0002_fires.sql (docs/decisions-fleet.md maps the types).
-- A fire whose turn has not reported yet: written in the fire's commit (count and cooldown stamp), removed in the
-- commit of its delivery row. One whose process is gone becomes a failed delivery saying the turn was lost.
CREATE TABLE triggers_fires (
  id TEXT PRIMARY KEY,
  trigger_id TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  node TEXT NOT NULL,
  cause TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX triggers_fires_node ON triggers_fires (node);
