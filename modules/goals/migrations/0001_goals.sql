-- Goals form a tree: deleting a goal deletes its descendants (ON DELETE CASCADE, recursively).
CREATE TABLE goals_goals (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  title TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL CHECK (status IN ('pending', 'in_progress', 'completed', 'cancelled')),
  progress INTEGER NOT NULL DEFAULT 0 CHECK (progress BETWEEN 0 AND 100),
  agent_id TEXT,
  parent_id TEXT REFERENCES goals_goals (id) ON DELETE CASCADE,
  due_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX goals_goals_parent ON goals_goals (parent_id);
