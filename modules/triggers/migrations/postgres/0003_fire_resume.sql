-- PostgreSQL twin of ../0003_fire_resume.sql: what a pending fire's turn needs to be resumed by another process when
-- the one that fired it dies.
ALTER TABLE triggers_fires ADD COLUMN prompt TEXT;
ALTER TABLE triggers_fires ADD COLUMN depth BIGINT NOT NULL DEFAULT 1;
