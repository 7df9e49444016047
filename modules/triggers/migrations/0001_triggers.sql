-- Triggers; the pattern is its normalised JSON object.
CREATE TABLE triggers_triggers (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  agent_id TEXT NOT NULL,
  pattern TEXT NOT NULL,
  prompt_template TEXT NOT NULL,
  enabled INTEGER NOT NULL DEFAULT 1,
  fire_count INTEGER NOT NULL DEFAULT 0,
  max_fires INTEGER NOT NULL DEFAULT 0,
  cooldown_secs INTEGER,
  session_mode TEXT,
  target_agent_id TEXT,
  workflow_id TEXT,
  last_fired_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX triggers_triggers_agent ON triggers_triggers (agent_id);

-- When each trigger last fired for each subject (an agent, a task, a memory key): cooldowns survive restarts.
CREATE TABLE triggers_cooldowns (
  trigger_id TEXT NOT NULL REFERENCES triggers_triggers (id) ON DELETE CASCADE,
  subject TEXT NOT NULL,
  fired_at INTEGER NOT NULL,
  PRIMARY KEY (trigger_id, subject)
) WITHOUT ROWID;

-- Where the replies of background turns went (home channel, or kept in the session), and failures.
CREATE TABLE triggers_deliveries (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  agent_id TEXT NOT NULL,
  source TEXT NOT NULL,
  source_id TEXT NOT NULL,
  session_id TEXT,
  status TEXT NOT NULL CHECK (status IN ('delivered', 'kept', 'failed')),
  channel TEXT,
  response TEXT,
  error TEXT,
  cause TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX triggers_deliveries_agent ON triggers_deliveries (agent_id, seq);
