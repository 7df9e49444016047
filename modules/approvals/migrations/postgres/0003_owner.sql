-- PostgreSQL twin of ../0003_owner.sql. A held tool call belongs to the process (node) whose agent asked, which resumes
-- the agent after the decision; `resumed_at` is set by the one process that claims the resumption (epoch ms).
ALTER TABLE approvals_requests ADD COLUMN node TEXT;
ALTER TABLE approvals_requests ADD COLUMN outcome TEXT;
ALTER TABLE approvals_requests ADD COLUMN resumed_at BIGINT;
UPDATE approvals_requests SET resumed_at = 0 WHERE status <> 'pending';
CREATE INDEX approvals_requests_owner ON approvals_requests (node) WHERE resumed_at IS NULL AND tool_call IS NOT NULL;
