-- Several processes on one home: a held tool call belongs to the process (node) whose agent asked, which resumes the
-- agent after the decision, whoever made it. `outcome` is how it ended for the resumer (approved, rejected, expired,
-- skipped); `resumed_at` is set by the one process that claims the resumption. A dead node's held calls are taken
-- over by a live one. Requests decided before this migration were resumed by the code of their time.
ALTER TABLE approvals_requests ADD COLUMN node TEXT;
ALTER TABLE approvals_requests ADD COLUMN outcome TEXT;
ALTER TABLE approvals_requests ADD COLUMN resumed_at INTEGER;
UPDATE approvals_requests SET resumed_at = 0 WHERE status <> 'pending';
CREATE INDEX approvals_requests_owner ON approvals_requests (node) WHERE resumed_at IS NULL AND tool_call IS NOT NULL;
