-- PostgreSQL twin of ../0002_auto_dream_jobs.sql: the scheduler job that consolidates the agent's memory.
ALTER TABLE auto_dream_agents ADD COLUMN job_id TEXT;
