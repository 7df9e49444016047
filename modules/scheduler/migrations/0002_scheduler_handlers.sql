-- A job may run a module's handler (registered through the scheduler.jobs service) instead of an agent turn or a
-- workflow: auto-dream's consolidation of an agent's memory is one. agent_id then only says whom the job concerns.
ALTER TABLE scheduler_jobs ADD COLUMN handler TEXT;
