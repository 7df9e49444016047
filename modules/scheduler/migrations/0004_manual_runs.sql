-- A manual run (POST /api/schedules/{id}/run) is a run row too, so the run history shows it: its slot is NULL (it
-- answers no slot of the schedule, and NULLs never collide under UNIQUE (job_id, slot)). SQLite cannot drop a NOT NULL
-- in place: the table is made again with the same columns and indexes, and its rows copied.
CREATE TABLE scheduler_runs_next (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  job_id TEXT NOT NULL REFERENCES scheduler_jobs (id) ON DELETE CASCADE,
  -- the scheduled time the run is for; NULL: a manual run
  slot INTEGER,
  node TEXT NOT NULL,
  lease_until INTEGER NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('running', 'ok', 'error', 'lost')),
  started_at INTEGER NOT NULL,
  finished_at INTEGER,
  error TEXT,
  UNIQUE (job_id, slot)
);
INSERT INTO scheduler_runs_next (seq, id, job_id, slot, node, lease_until, state, started_at, finished_at, error)
  SELECT seq, id, job_id, slot, node, lease_until, state, started_at, finished_at, error FROM scheduler_runs;
DROP TABLE scheduler_runs;
ALTER TABLE scheduler_runs_next RENAME TO scheduler_runs;
CREATE INDEX scheduler_runs_running ON scheduler_runs (node) WHERE state = 'running';
CREATE INDEX scheduler_runs_job ON scheduler_runs (job_id, seq);
