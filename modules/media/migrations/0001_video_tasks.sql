-- Durable video tasks: a row per task is the whole state (the poller keeps none in memory), so a restart resumes them
-- and several processes share them. task_id is ours (a UUID), provider_task_id the provider's. While a process polls a
-- task it holds it: node + lease_until (epoch ms), claimed with a conditional UPDATE and renewed while the poll runs.
CREATE TABLE media_video_tasks (
  task_id TEXT PRIMARY KEY,
  provider TEXT NOT NULL,
  provider_task_id TEXT NOT NULL,
  model TEXT NOT NULL,
  prompt TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('processing', 'completed', 'failed', 'cancelled')),
  progress REAL,
  -- polls made (they set the backoff) and polls that failed in a row (reset by an answer)
  polls INTEGER NOT NULL DEFAULT 0,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_poll_at INTEGER NOT NULL,
  deadline_at INTEGER NOT NULL,
  node TEXT,
  lease_until INTEGER,
  result_file_id TEXT,
  width INTEGER,
  height INTEGER,
  duration_secs REAL,
  error TEXT,
  agent_id TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX media_video_tasks_due ON media_video_tasks (status, next_poll_at);
