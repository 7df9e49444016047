-- PostgreSQL twin of ../0001_seen.sql (docs/decisions-fleet.md maps the types).
-- The Mattermost adapter's catch-up cursor: per account (server and bot user) and channel, the create_at of the
-- newest post committed to the channels journal, so the posts made while the WebSocket was down (or the service was
-- stopped) are fetched with GET /channels/{id}/posts?since= on the next connection. The row with channel_id '' holds
-- the account's first connection time: channels never seen are caught up from there.
CREATE TABLE channel_mattermost_seen (
  account TEXT NOT NULL,
  channel_id TEXT NOT NULL,
  last_at BIGINT NOT NULL,
  PRIMARY KEY (account, channel_id)
);
