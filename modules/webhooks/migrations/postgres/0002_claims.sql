-- PostgreSQL twin of ../0002_claims.sql (docs/decisions-fleet.md maps the types).
-- A delivery is claimed before it is sent, so that of several processes on one database exactly one sends it:
-- status 'sending', the claiming node and the end of its lease. A dead node's claims go back to 'pending'.
ALTER TABLE webhooks_deliveries ADD COLUMN node TEXT;
ALTER TABLE webhooks_deliveries ADD COLUMN lease_until BIGINT;
CREATE INDEX webhooks_deliveries_node ON webhooks_deliveries (node) WHERE node IS NOT NULL;
