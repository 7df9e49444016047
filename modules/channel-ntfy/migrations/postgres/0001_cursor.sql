-- PostgreSQL twin of ../0001_cursor.sql (docs/decisions-fleet.md maps the types).
-- Per channel, the `since` of the next subscription: the id of the last message the journal committed (or, before
-- the first one, the server's time when the channel first subscribed), so messages published while no process ran
-- are read on the next start.
CREATE TABLE channel_ntfy_cursor (
  channel TEXT PRIMARY KEY,
  since TEXT NOT NULL,
  updated_at BIGINT NOT NULL
);
