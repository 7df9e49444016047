-- A branch: a session forked from another at one of its messages (edit a sent message, regenerate a reply). It holds
-- a copy of the parent's first `forked_at` messages; the parent stays as it was.
ALTER TABLE agents_sessions ADD COLUMN parent_id TEXT;
ALTER TABLE agents_sessions ADD COLUMN forked_at INTEGER;

-- 1 for an assistant reply a stop cut short (its partial text is the content).
ALTER TABLE agents_messages ADD COLUMN stopped INTEGER NOT NULL DEFAULT 0;
