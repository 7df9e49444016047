-- PostgreSQL twin of ../0001_whatsapp_web_auth.sql (docs/decisions-fleet.md maps the types).
-- WhatsApp Web's sign-in (web mode): Baileys' auth state, one row per key of a channel, each value sealed with the vault.
CREATE TABLE channel_whatsapp_auth (
  channel TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (channel, key)
);
