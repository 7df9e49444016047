-- PostgreSQL twin of ../0001_conversations.sql (docs/decisions-fleet.md maps the types).
-- Where each Teams conversation is answered: the serviceUrl of its latest activity whose token was valid (the
-- Bot Framework says to keep the newest, since it may change), so a reply after a restart still finds its connector.
CREATE TABLE channel_teams_conversations (
  conversation_id TEXT PRIMARY KEY,
  service_url TEXT NOT NULL,
  updated_at BIGINT NOT NULL
);
