-- PostgreSQL twin of ../0004_runs_key.sql (docs/decisions-fleet.md maps the types).
-- An idempotency key a caller may give a run (the scheduler's 'scheduler:<job>:<slot>'): a start with a key already
-- kept answers that run instead of starting another, so a scheduled run taken over from a dead process never starts
-- its workflow a second time. NULL (most runs) never conflicts.
ALTER TABLE workflows_runs ADD COLUMN key TEXT;
CREATE UNIQUE INDEX workflows_runs_key ON workflows_runs (key);
