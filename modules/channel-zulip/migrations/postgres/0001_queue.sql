-- PostgreSQL twin of ../0001_queue.sql (docs/decisions-fleet.md maps the types).
-- The Zulip adapter's event queue per account (server and bot email): the queue id, the id of the last event whose
-- message is committed to the channels journal (the server drops events up to the last_event_id a poll names), and the
-- last message id seen, from which an expired queue's successor catches up with GET /messages.
CREATE TABLE channel_zulip_queue (
  account TEXT PRIMARY KEY,
  queue_id TEXT NOT NULL,
  last_event_id BIGINT NOT NULL,
  last_message_id BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
