-- PostgreSQL twin of ../0001_create.sql (docs/decisions-fleet.md maps the types; times are epoch ms, BIGINT).
-- Channel configurations set through the API (config.toml's [channels.<name>] is read beside them).
-- settings: JSON of the common and the adapter's non-secret fields; secrets: JSON field -> sealed value.
CREATE TABLE channels_config (
  name TEXT PRIMARY KEY,
  enabled BIGINT NOT NULL DEFAULT 1,
  settings TEXT NOT NULL,
  secrets TEXT NOT NULL DEFAULT '{}',
  updated_at BIGINT NOT NULL
);

-- The inbound journal: a row is committed before the platform is acknowledged; (channel, platform_id) drops a
-- redelivery. received -> adopted -> answered; or refused / failed. node: the process working on it (a lease).
CREATE TABLE channels_inbound (
  id TEXT PRIMARY KEY,
  channel TEXT NOT NULL,
  platform_id TEXT NOT NULL,
  chat_id TEXT NOT NULL,
  thread_id TEXT NOT NULL DEFAULT '',
  sender_id TEXT NOT NULL,
  payload TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('received', 'adopted', 'answered', 'refused', 'failed')),
  reason TEXT,
  agent_id TEXT,
  session_id TEXT,
  node TEXT,
  attempts BIGINT NOT NULL DEFAULT 0,
  received_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  UNIQUE (channel, platform_id)
);
CREATE INDEX channels_inbound_open ON channels_inbound (state, node);

-- The outbound journal: one row per chunk. queued -> sending -> sent with message_id; failed keeps the payload; a row
-- found sending after its process died becomes unknown; a row not sent by not_after becomes expired.
CREATE TABLE channels_outbound (
  id TEXT PRIMARY KEY,
  channel TEXT NOT NULL,
  chat_id TEXT NOT NULL,
  reply_id TEXT NOT NULL,
  seq BIGINT NOT NULL,
  inbound_id TEXT,
  payload TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('queued', 'sending', 'sent', 'failed', 'unknown', 'expired')),
  message_id TEXT,
  error TEXT,
  node TEXT,
  attempts BIGINT NOT NULL DEFAULT 0,
  created_at BIGINT NOT NULL,
  not_after BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE INDEX channels_outbound_state ON channels_outbound (state, channel);
CREATE INDEX channels_outbound_reply ON channels_outbound (reply_id, seq);

-- One session per (channel, chat, thread) and agent.
CREATE TABLE channels_sessions (
  channel TEXT NOT NULL,
  chat_id TEXT NOT NULL,
  thread_id TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  PRIMARY KEY (channel, chat_id, thread_id, agent_id)
);

-- Senders the owner approved (dm_policy = pairing), and the codes waiting for approval.
CREATE TABLE channels_senders (
  channel TEXT NOT NULL,
  sender_id TEXT NOT NULL,
  approved_at BIGINT NOT NULL,
  PRIMARY KEY (channel, sender_id)
);
CREATE TABLE channels_pairing (
  code TEXT PRIMARY KEY,
  channel TEXT NOT NULL,
  sender_id TEXT NOT NULL,
  sender_name TEXT,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  UNIQUE (channel, sender_id)
);
