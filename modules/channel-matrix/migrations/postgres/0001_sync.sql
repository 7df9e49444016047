-- PostgreSQL twin of ../0001_sync.sql (docs/decisions-fleet.md maps the types).
-- The Matrix adapter's sync cursor: the next_batch token past the last sync whose events are all committed to the
-- channels journal, per account (homeserver and user id), so a restart resumes there instead of answering history.
CREATE TABLE channel_matrix_sync (
  account TEXT PRIMARY KEY,
  next_batch TEXT NOT NULL,
  updated_at BIGINT NOT NULL
);
