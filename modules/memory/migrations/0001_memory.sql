-- Per-agent key-value memory: values are JSON text.
CREATE TABLE memory_kv (
  agent_id TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (agent_id, key)
) WITHOUT ROWID;

-- Proactive memory entries. Times are epoch milliseconds (decay arithmetic); the API shows ISO strings.
CREATE TABLE memory_entries (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  agent_id TEXT,
  user_id TEXT,
  session_id TEXT,
  level TEXT NOT NULL CHECK (level IN ('user', 'session', 'agent')),
  category TEXT,
  source TEXT NOT NULL DEFAULT 'api',
  content TEXT NOT NULL,
  tags TEXT NOT NULL DEFAULT '[]',
  metadata TEXT NOT NULL DEFAULT '{}',
  score REAL NOT NULL DEFAULT 1.0,
  access_count INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  accessed_at INTEGER NOT NULL,
  -- decay has been applied up to this instant (a period boundary)
  decayed_at INTEGER NOT NULL,
  expires_at INTEGER
);
CREATE INDEX memory_entries_agent ON memory_entries (agent_id, level);
CREATE INDEX memory_entries_user ON memory_entries (user_id);
CREATE INDEX memory_entries_created ON memory_entries (created_at);

-- Previous versions of an entry (updates and consolidation merges), oldest first.
CREATE TABLE memory_history (
  id INTEGER PRIMARY KEY,
  memory_id TEXT NOT NULL REFERENCES memory_entries (id) ON DELETE CASCADE ON UPDATE CASCADE,
  content TEXT NOT NULL,
  tags TEXT NOT NULL,
  level TEXT NOT NULL,
  category TEXT,
  changed_at INTEGER NOT NULL,
  reason TEXT NOT NULL
);
CREATE INDEX memory_history_memory ON memory_history (memory_id, id);

-- BM25 full-text index over content, kept in step by triggers.
CREATE VIRTUAL TABLE memory_fts USING fts5 (
  content,
  content = 'memory_entries',
  content_rowid = 'seq',
  tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER memory_entries_ai AFTER INSERT ON memory_entries BEGIN
  INSERT INTO memory_fts (rowid, content) VALUES (new.seq, new.content);
END;
CREATE TRIGGER memory_entries_ad AFTER DELETE ON memory_entries BEGIN
  INSERT INTO memory_fts (memory_fts, rowid, content) VALUES ('delete', old.seq, old.content);
END;
CREATE TRIGGER memory_entries_au AFTER UPDATE OF content ON memory_entries BEGIN
  INSERT INTO memory_fts (memory_fts, rowid, content) VALUES ('delete', old.seq, old.content);
  INSERT INTO memory_fts (rowid, content) VALUES (new.seq, new.content);
END;

-- Full-precision embeddings (little-endian f32) for re-ranking; the sqlite-vec
-- tables memory_vec_<dim> (binary-quantised, partitioned by agent) are created
-- when the first vector of a dimension arrives.
CREATE TABLE memory_embeddings (
  entry_seq INTEGER PRIMARY KEY REFERENCES memory_entries (seq) ON DELETE CASCADE,
  model TEXT NOT NULL,
  dim INTEGER NOT NULL,
  vector BLOB NOT NULL
);

-- Relation graph: (subject, relation, object) triples per agent.
CREATE TABLE memory_relations (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  subject TEXT NOT NULL,
  relation TEXT NOT NULL,
  object TEXT NOT NULL,
  confidence REAL NOT NULL,
  source_memory_id TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (agent_id, subject, relation, object)
);
CREATE INDEX memory_relations_subject ON memory_relations (agent_id, subject COLLATE NOCASE);
CREATE INDEX memory_relations_object ON memory_relations (agent_id, object COLLATE NOCASE);
