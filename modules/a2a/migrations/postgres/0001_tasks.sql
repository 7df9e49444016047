-- PostgreSQL twin of ../0001_tasks.sql (docs/decisions-fleet.md maps the types).
-- Tasks served by this instance (A2A server side): the SDK's Task as proto JSON.
CREATE TABLE a2a_tasks (
  id TEXT PRIMARY KEY,
  context_id TEXT NOT NULL,
  agent_id TEXT,
  state TEXT NOT NULL,
  task TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX a2a_tasks_updated ON a2a_tasks (updated_at);
CREATE INDEX a2a_tasks_context ON a2a_tasks (context_id);

-- External A2A agents discovered through POST /api/a2a/discover.
CREATE TABLE a2a_remote_agents (
  id TEXT PRIMARY KEY,
  url TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  card TEXT NOT NULL,
  discovered_at TEXT NOT NULL
);

-- Tasks sent to external agents (A2A client side); remote_id is the id the other agent gave.
CREATE TABLE a2a_remote_tasks (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL REFERENCES a2a_remote_agents (id) ON DELETE CASCADE,
  remote_id TEXT NOT NULL,
  state TEXT NOT NULL,
  task TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
