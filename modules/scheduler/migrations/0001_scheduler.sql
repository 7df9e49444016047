-- Every schedule and cron job, one table (one engine). Times the scheduler compares are epoch ms; next_run is
-- advanced by the claim before a run starts, so a job fires once even with several nodes on one database.
CREATE TABLE scheduler_jobs (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  agent_id TEXT,
  workflow_id TEXT,
  -- the schedule as written ("0 9 * * 1-5", "every 5m", "at 2026-12-01T09:00:00Z"), its kind and time zone
  schedule TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('cron', 'every', 'at')),
  tz TEXT NOT NULL DEFAULT 'UTC',
  prompt TEXT NOT NULL DEFAULT '',
  enabled INTEGER NOT NULL DEFAULT 1,
  one_shot INTEGER NOT NULL DEFAULT 0,
  session_mode TEXT,
  misfire_policy TEXT,
  timeout_secs INTEGER,
  -- interval jobs count their slots from here (creation or the last schedule change)
  anchor INTEGER NOT NULL,
  next_run INTEGER,
  last_run INTEGER,
  last_status TEXT,
  last_result TEXT,
  last_error TEXT,
  consecutive_failures INTEGER NOT NULL DEFAULT 0,
  auto_disabled INTEGER NOT NULL DEFAULT 0,
  disabled_reason TEXT,
  run_count INTEGER NOT NULL DEFAULT 0,
  created_via TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX scheduler_jobs_due ON scheduler_jobs (next_run) WHERE enabled = 1;
CREATE INDEX scheduler_jobs_agent ON scheduler_jobs (agent_id);
CREATE INDEX scheduler_jobs_workflow ON scheduler_jobs (workflow_id);
