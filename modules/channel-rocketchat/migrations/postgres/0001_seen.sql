-- PostgreSQL twin of ../0001_seen.sql (docs/decisions-fleet.md maps the types).
-- The Rocket.Chat adapter's catch-up cursor: per account (server and bot user) and room, the time of the newest
-- message committed to the channels journal, so messages sent while the realtime socket was down (or the service
-- stopped) are read with the REST *.history calls on the next connection. The row with room_id '' holds the account's
-- first connection time (the server's clock): rooms never seen are caught up from there.
CREATE TABLE channel_rocketchat_seen (
  account TEXT NOT NULL,
  room_id TEXT NOT NULL,
  last_at BIGINT NOT NULL,
  PRIMARY KEY (account, room_id)
);
