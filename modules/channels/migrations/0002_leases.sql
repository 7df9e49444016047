-- One process runs a channel: the node holding the channel's lease until expires_at (epoch ms), renewed while its
-- adapter runs. Another process takes it over with one conditional upsert once it expired or its node is not live.
CREATE TABLE channels_leases (
  channel TEXT PRIMARY KEY,
  node TEXT NOT NULL,
  expires_at INTEGER NOT NULL
);
