CREATE TABLE agents_agents (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL,
  manifest_toml TEXT NOT NULL,
  -- the rest of the AgentRecord (state, mode, model, tools...) as JSON
  data TEXT NOT NULL
);

CREATE TABLE agents_sessions (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  label TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  -- LLM summary written by compaction, NULL when never compacted
  summary TEXT
);
CREATE INDEX agents_sessions_agent ON agents_sessions (agent_id);
CREATE UNIQUE INDEX agents_sessions_label ON agents_sessions (agent_id, label) WHERE label IS NOT NULL;

CREATE TABLE agents_messages (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  session_id TEXT NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('User', 'Assistant')),
  content TEXT NOT NULL,
  blocks TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX agents_messages_session ON agents_messages (session_id, seq);

CREATE TABLE agents_uploads (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  filename TEXT NOT NULL,
  content_type TEXT NOT NULL,
  size INTEGER NOT NULL,
  path TEXT NOT NULL,
  created_at TEXT NOT NULL
);

-- One row per finished turn: traces, metrics and logs are read from here.
CREATE TABLE agents_turns (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  origin TEXT NOT NULL,
  started_at TEXT NOT NULL,
  duration_ms INTEGER NOT NULL,
  iterations INTEGER NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  cost_usd REAL NOT NULL,
  outcome TEXT NOT NULL,
  error TEXT,
  -- JSON: [{iteration, llm_ms, tools: [{tool, ms, is_error, verdict}]}]
  steps TEXT NOT NULL
);
CREATE INDEX agents_turns_agent ON agents_turns (agent_id, started_at);
