CREATE TABLE auto_dream_agents (
  agent_id TEXT PRIMARY KEY,
  -- NULL: follows [auto_dream] enabled
  enabled INTEGER,
  last_run_at TEXT,
  last_status TEXT,
  last_result TEXT,
  runs INTEGER NOT NULL DEFAULT 0
);
