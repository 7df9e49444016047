-- WhatsApp Web's sign-in (web mode): Baileys' auth state, one row per key of a channel: `creds` (the account's
-- credentials), `creds.backup` (the credentials as of the last connection that opened, read when `creds` cannot be),
-- and `key:<type>:<id>` (the Signal keys: pre-keys, sessions, sender keys, app-state keys). Each value is Baileys'
-- BufferJSON text sealed with the vault (owner 'channel-whatsapp:auth:<key>').
CREATE TABLE channel_whatsapp_auth (
  channel TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (channel, key)
);
