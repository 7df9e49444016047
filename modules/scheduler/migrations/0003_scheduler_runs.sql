-- Each scheduled run, claimed with its slot: the claim that moves a job's next_run on inserts the run rows in the
-- same transaction. A run records the node executing it; when that node dies, a live node takes the run over (runs it
-- again, or marks it lost, by the job's misfire policy). "The previous run is still going" is a running row. Times
-- are epoch ms; slot is the scheduled time the run is for.
CREATE TABLE scheduler_runs (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  job_id TEXT NOT NULL REFERENCES scheduler_jobs (id) ON DELETE CASCADE,
  slot INTEGER NOT NULL,
  node TEXT NOT NULL,
  -- renewed while the node runs it; a node that stops renewing is dead (its heartbeat says so first)
  lease_until INTEGER NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('running', 'ok', 'error', 'lost')),
  started_at INTEGER NOT NULL,
  finished_at INTEGER,
  error TEXT,
  UNIQUE (job_id, slot)
);
CREATE INDEX scheduler_runs_running ON scheduler_runs (node) WHERE state = 'running';
CREATE INDEX scheduler_runs_job ON scheduler_runs (job_id, seq);
