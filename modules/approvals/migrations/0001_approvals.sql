CREATE TABLE approvals_requests (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  agent_name TEXT NOT NULL,
  action TEXT NOT NULL,
  description TEXT NOT NULL,
  payload TEXT NOT NULL,
  risk_level TEXT NOT NULL,
  status TEXT NOT NULL,
  created_at TEXT NOT NULL,
  decided_at TEXT,
  decided_by TEXT,
  expires_at TEXT NOT NULL,
  escalations INTEGER NOT NULL DEFAULT 0,
  -- the held tool call ({tool, input, session_id}) for gated calls; NULL for requests made through the API
  tool_call TEXT,
  pending INTEGER GENERATED ALWAYS AS (status = 'pending') VIRTUAL
);
CREATE INDEX approvals_requests_list ON approvals_requests (pending DESC, created_at DESC);
CREATE INDEX approvals_requests_expiry ON approvals_requests (status, expires_at);

CREATE TABLE approvals_audit (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  request_id TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  action TEXT NOT NULL,
  risk_level TEXT NOT NULL,
  decision TEXT NOT NULL,
  decided_by TEXT,
  at TEXT NOT NULL,
  second_factor_used INTEGER NOT NULL DEFAULT 0,
  reason TEXT
);

-- one row: the operator's TOTP enrollment (secret sealed with the service vault, recovery codes hashed)
CREATE TABLE approvals_totp (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  secret TEXT NOT NULL,
  confirmed INTEGER NOT NULL DEFAULT 0,
  recovery_hashes TEXT NOT NULL,
  last_step INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL
);

-- failed second-factor attempts, per purpose (approve, setup, revoke, confirm), for the lockout
CREATE TABLE approvals_totp_failures (
  purpose TEXT PRIMARY KEY,
  failures INTEGER NOT NULL,
  locked_until INTEGER NOT NULL DEFAULT 0
);
