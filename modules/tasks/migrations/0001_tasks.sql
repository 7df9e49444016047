-- The task board. Times are ISO text for the API, except claim_deadline (epoch ms, compared by the sweeper).
CREATE TABLE tasks_tasks (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  title TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL CHECK (status IN ('pending', 'in_progress', 'completed', 'failed', 'cancelled')),
  -- as posted (agent UUID or name); kept so a timed-out claim returns the task to its assignee
  posted_to TEXT,
  -- posted_to while pending, the claimer's UUID while claimed
  assigned_to TEXT,
  created_by TEXT,
  created_at TEXT NOT NULL,
  claimed_at TEXT,
  claim_deadline INTEGER,
  completed_at TEXT,
  result TEXT,
  retry_count INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX tasks_tasks_status ON tasks_tasks (status, seq);
CREATE INDEX tasks_tasks_claims ON tasks_tasks (claim_deadline) WHERE status = 'in_progress';
