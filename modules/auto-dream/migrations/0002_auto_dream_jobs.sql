-- The scheduler job that consolidates the agent's memory (auto-dream runs through the scheduler).
ALTER TABLE auto_dream_agents ADD COLUMN job_id TEXT;
