-- One row per upstream LLM call (successful or not), priced when it happened.
CREATE TABLE usage_calls (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  at INTEGER NOT NULL,            -- epoch milliseconds
  agent_id TEXT,
  agent_name TEXT,
  session_id TEXT,
  purpose TEXT,
  provider TEXT NOT NULL,
  model TEXT NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  cost_usd REAL NOT NULL,
  latency_ms INTEGER NOT NULL,
  ok INTEGER NOT NULL,
  error TEXT
);
CREATE INDEX usage_calls_at ON usage_calls (at);
CREATE INDEX usage_calls_agent_at ON usage_calls (agent_id, at);

-- Budgets set through PUT /api/budget (scope 'global') and PUT /api/budget/agents/{id} (scope = agent id).
CREATE TABLE usage_budgets (
  scope TEXT PRIMARY KEY,
  daily_limit_usd REAL NOT NULL,
  monthly_limit_usd REAL NOT NULL,
  updated_at TEXT NOT NULL
);
