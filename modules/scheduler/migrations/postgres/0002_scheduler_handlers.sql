-- PostgreSQL twin of ../0002_scheduler_handlers.sql: a job may run a module's handler instead of an agent turn.
ALTER TABLE scheduler_jobs ADD COLUMN handler TEXT;
