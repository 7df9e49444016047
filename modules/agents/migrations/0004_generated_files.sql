-- The upload store also keeps the files the service makes (media results): those need no agent, have a kind, a
-- source and an expiry (the generated-file retention); every new file keeps its sha256 (the ETag it is served with).
-- The table is built anew because SQLite cannot drop NOT NULL from agent_id; created_at becomes epoch milliseconds.
CREATE TABLE agents_uploads_v2 (
  id TEXT PRIMARY KEY,
  agent_id TEXT,
  filename TEXT NOT NULL,
  content_type TEXT NOT NULL,
  size INTEGER NOT NULL,
  path TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  sha256 TEXT,
  -- 1 for a file the service made (kind, source_* set); only those expire
  generated INTEGER NOT NULL DEFAULT 0,
  kind TEXT,
  source_provider TEXT,
  source_model TEXT,
  expires_at INTEGER
);
INSERT INTO agents_uploads_v2 (id, agent_id, filename, content_type, size, path, created_at)
SELECT id, agent_id, filename, content_type, size, path, COALESCE(CAST(ROUND((julianday(created_at) - 2440587.5) * 86400000) AS INTEGER), 0)
FROM agents_uploads;
DROP TABLE agents_uploads;
ALTER TABLE agents_uploads_v2 RENAME TO agents_uploads;
CREATE INDEX agents_uploads_agent ON agents_uploads (agent_id);
CREATE INDEX agents_uploads_expiry ON agents_uploads (expires_at) WHERE expires_at IS NOT NULL;

-- The files a turn's tools made, on its last assistant message (JSON list of StoredFile; NULL when none).
ALTER TABLE agents_messages ADD COLUMN files TEXT;
