-- kind 'outbound': a named webhook for several events; kind 'event': an event webhook subscription (one event_type)
CREATE TABLE webhooks_hooks (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  name TEXT NOT NULL,
  url TEXT NOT NULL,
  events TEXT NOT NULL,
  secret TEXT,
  enabled INTEGER NOT NULL DEFAULT 1,
  disabled_reason TEXT,
  consecutive_failures INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

-- the delivery journal: a row per (event, webhook), written before the first attempt
CREATE TABLE webhooks_deliveries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  hook_id TEXT NOT NULL REFERENCES webhooks_hooks (id) ON DELETE CASCADE,
  event_id TEXT NOT NULL,
  event TEXT NOT NULL,
  body TEXT NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  last_error TEXT,
  last_status INTEGER,
  created_at TEXT NOT NULL,
  delivered_at TEXT
);
CREATE INDEX webhooks_deliveries_due ON webhooks_deliveries (status, next_attempt_at);
CREATE INDEX webhooks_deliveries_hook ON webhooks_deliveries (hook_id, id);
