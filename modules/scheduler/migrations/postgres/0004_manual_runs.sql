-- PostgreSQL twin of ../0004_manual_runs.sql: a manual run has a NULL slot (NULLs never collide under
-- UNIQUE (job_id, slot)). SQLite rebuilt the table to drop the NOT NULL; PostgreSQL drops it in place, and the table,
-- its columns and indexes end up the same.
ALTER TABLE scheduler_runs ALTER COLUMN slot DROP NOT NULL;
