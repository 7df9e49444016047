-- PostgreSQL twin of ../0004_generated_files.sql. The upload store also keeps the files the service makes (media
-- results): no agent, a kind, a source and an expiry; every new file keeps its sha256. SQLite rebuilt the table to
-- drop NOT NULL from agent_id and make created_at epoch milliseconds; PostgreSQL changes both in place (an ISO text
-- that does not parse as a time becomes 0, as SQLite's julianday NULL does), and the columns end up in the same order.
ALTER TABLE agents_uploads ALTER COLUMN agent_id DROP NOT NULL;
ALTER TABLE agents_uploads ALTER COLUMN created_at TYPE BIGINT
  USING COALESCE(CASE WHEN created_at ~ '^\d{4}-\d\d-\d\d'
    THEN ROUND(EXTRACT(EPOCH FROM created_at::timestamptz) * 1000)::bigint END, 0);
ALTER TABLE agents_uploads ADD COLUMN sha256 TEXT;
-- 1 for a file the service made (kind, source_* set); only those expire
ALTER TABLE agents_uploads ADD COLUMN generated BIGINT NOT NULL DEFAULT 0;
ALTER TABLE agents_uploads ADD COLUMN kind TEXT;
ALTER TABLE agents_uploads ADD COLUMN source_provider TEXT;
ALTER TABLE agents_uploads ADD COLUMN source_model TEXT;
ALTER TABLE agents_uploads ADD COLUMN expires_at BIGINT;
CREATE INDEX agents_uploads_agent ON agents_uploads (agent_id);
CREATE INDEX agents_uploads_expiry ON agents_uploads (expires_at) WHERE expires_at IS NOT NULL;

-- The files a turn's tools made, on its last assistant message (JSON list of StoredFile; NULL when none).
ALTER TABLE agents_messages ADD COLUMN files TEXT;
