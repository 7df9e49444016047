-- Workflow definitions: the normalised definition as JSON text; name and description apart for lists.
CREATE TABLE workflows_workflows (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  definition TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX workflows_workflows_name ON workflows_workflows (name COLLATE NOCASE);

-- Runs: every state change is written at once, so a crash leaves a row a restart can mark Failed.
CREATE TABLE workflows_runs (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  workflow_id TEXT NOT NULL REFERENCES workflows_workflows (id) ON DELETE CASCADE,
  workflow_name TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('Pending', 'Running', 'Completed', 'Failed', 'Cancelled')),
  input TEXT NOT NULL,
  output TEXT,
  error TEXT,
  origin TEXT NOT NULL,
  -- the process run (pid and start time) executing it: runs of an earlier process were interrupted
  boot TEXT NOT NULL,
  steps_completed INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  started_at TEXT,
  completed_at TEXT
);
CREATE INDEX workflows_runs_workflow ON workflows_runs (workflow_id, seq);
CREATE INDEX workflows_runs_open ON workflows_runs (state) WHERE state IN ('Pending', 'Running');

-- One row per step execution (a loop iteration is one row; skipped steps too), in order of completion.
CREATE TABLE workflows_run_steps (
  seq INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL REFERENCES workflows_runs (id) ON DELETE CASCADE,
  step_index INTEGER NOT NULL,
  step_name TEXT NOT NULL,
  iteration INTEGER,
  agent_id TEXT,
  agent_name TEXT,
  status TEXT NOT NULL CHECK (status IN ('completed', 'failed', 'skipped')),
  prompt TEXT,
  output TEXT,
  error TEXT,
  attempts INTEGER NOT NULL DEFAULT 0,
  started_at TEXT NOT NULL,
  duration_ms INTEGER NOT NULL,
  input_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX workflows_run_steps_run ON workflows_run_steps (run_id, step_index);
