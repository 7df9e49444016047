-- PostgreSQL twin of ../0002_notified.sql: whether the push of a request reached a human (1 a device, 0 nobody, NULL
-- while the push is under way).
ALTER TABLE approvals_requests ADD COLUMN notified BIGINT;
