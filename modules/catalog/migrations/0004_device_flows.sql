-- Device-flow logins waiting for the user (RFC 8628), in the database so that a poll reaching another process or node
-- finds its flow. A row ends when the flow does (authorized, denied, expired); the expired ones left are pruned at the
-- next start of a flow.
CREATE TABLE catalog_device_flows (
  poll_id TEXT PRIMARY KEY,
  provider TEXT NOT NULL,
  device_code TEXT NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX catalog_device_flows_expiry ON catalog_device_flows (expires_at);
