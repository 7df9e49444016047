-- Accepted wakes (POST /api/hooks/wake), stored before the 200 so a crash between the answer and the delivery loses
-- nothing: rows with delivered_at NULL are published at the next start. Delivered rows are kept
-- [hooks] wake_retention_days (their idempotency keys with them), then pruned.
CREATE TABLE hooks_inbound_wakes (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  idempotency_key TEXT UNIQUE,
  text TEXT NOT NULL,
  mode TEXT NOT NULL,
  agent_id TEXT,
  received_at INTEGER NOT NULL,
  delivered_at INTEGER
);
CREATE INDEX hooks_inbound_wakes_pending ON hooks_inbound_wakes (seq) WHERE delivered_at IS NULL;
CREATE INDEX hooks_inbound_wakes_delivered ON hooks_inbound_wakes (delivered_at) WHERE delivered_at IS NOT NULL;
