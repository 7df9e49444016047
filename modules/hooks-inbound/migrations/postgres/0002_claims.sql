-- PostgreSQL twin of ../0002_claims.sql (docs/decisions-fleet.md maps the types).
-- Several processes on one database: an undelivered wake is claimed (node, lease_until) by the one process that
-- publishes it; a dead node's claims are released, so another process publishes them (at least once, the same wakeId).
ALTER TABLE hooks_inbound_wakes ADD COLUMN node TEXT;
ALTER TABLE hooks_inbound_wakes ADD COLUMN lease_until BIGINT;
