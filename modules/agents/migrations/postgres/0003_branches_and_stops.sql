-- PostgreSQL twin of ../0003_branches_and_stops.sql. A branch: a session forked from another at one of its messages;
-- it holds a copy of the parent's first `forked_at` messages.
ALTER TABLE agents_sessions ADD COLUMN parent_id TEXT;
ALTER TABLE agents_sessions ADD COLUMN forked_at BIGINT;

-- 1 for an assistant reply a stop cut short (its partial text is the content).
ALTER TABLE agents_messages ADD COLUMN stopped BIGINT NOT NULL DEFAULT 0;
