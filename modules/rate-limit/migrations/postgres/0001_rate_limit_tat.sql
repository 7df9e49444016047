-- PostgreSQL twin of ../0001_rate_limit_tat.sql (docs/decisions-fleet.md maps the types).
-- The exact fleet limiter ([rate_limit] fleet = "exact"): one GCRA theoretical arrival time per client key, shared by
-- every node on the database. A key whose TAT has passed has a full budget again, like a key with no row, so the
-- expired ones are pruned. No index on tat: it would be rewritten on every request, while the prune runs once a
-- minute over a table no larger than the clients of the last minute.
CREATE TABLE rate_limit_tat (
  key TEXT PRIMARY KEY,
  tat DOUBLE PRECISION NOT NULL
);
