-- PostgreSQL twin of ../0002_leases.sql: one process runs a channel, the node holding the channel's lease until
-- expires_at (epoch ms), renewed while its adapter runs; another takes it over once it expired or its node is not live.
CREATE TABLE channels_leases (
  channel TEXT PRIMARY KEY,
  node TEXT NOT NULL,
  expires_at BIGINT NOT NULL
);
