-- whether the push of a request reached a human: 1 at least one device, 0 nobody (no device, push off, every push
-- failed), NULL while the push is under way (or for requests older than this column)
ALTER TABLE approvals_requests ADD COLUMN notified INTEGER;
