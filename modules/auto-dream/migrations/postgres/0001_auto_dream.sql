-- PostgreSQL twin of ../0001_auto_dream.sql (docs/decisions-fleet.md maps the types).
CREATE TABLE auto_dream_agents (
  agent_id TEXT PRIMARY KEY,
  -- NULL: follows [auto_dream] enabled
  enabled BIGINT,
  last_run_at TEXT,
  last_status TEXT,
  last_result TEXT,
  runs BIGINT NOT NULL DEFAULT 0
);
