-- PostgreSQL twin of ../0001_video_tasks.sql (docs/decisions-fleet.md maps the types).
-- Durable video tasks: the row is the whole state; a process polling a task holds it (node + lease_until, epoch ms).
CREATE TABLE media_video_tasks (
  task_id TEXT PRIMARY KEY,
  provider TEXT NOT NULL,
  provider_task_id TEXT NOT NULL,
  model TEXT NOT NULL,
  prompt TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('processing', 'completed', 'failed', 'cancelled')),
  progress DOUBLE PRECISION,
  polls BIGINT NOT NULL DEFAULT 0,
  attempts BIGINT NOT NULL DEFAULT 0,
  next_poll_at BIGINT NOT NULL,
  deadline_at BIGINT NOT NULL,
  node TEXT,
  lease_until BIGINT,
  result_file_id TEXT,
  width BIGINT,
  height BIGINT,
  duration_secs DOUBLE PRECISION,
  error TEXT,
  agent_id TEXT,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE INDEX media_video_tasks_due ON media_video_tasks (status, next_poll_at);
