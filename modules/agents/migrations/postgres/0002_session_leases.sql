-- PostgreSQL twin of ../0002_session_leases.sql. Who runs the turn of a session now (turn_id set), or ran its last one
-- (turn_id NULL): a turn runs only while it holds its session's row, whichever process it arrived on. `node` is the
-- process (kernel_nodes.id), `holder` the copy of the module in it; times are epoch milliseconds (BIGINT).
CREATE TABLE agents_session_leases (
  session_id TEXT PRIMARY KEY,
  turn_id TEXT,
  agent_id TEXT NOT NULL,
  node TEXT NOT NULL,
  holder TEXT NOT NULL,
  origin TEXT NOT NULL,
  started_at BIGINT NOT NULL
);
CREATE INDEX agents_session_leases_node ON agents_session_leases (node) WHERE turn_id IS NOT NULL;
CREATE INDEX agents_session_leases_agent ON agents_session_leases (agent_id) WHERE turn_id IS NOT NULL;

-- Turns waiting for their session, in the order they arrived (any process): the oldest takes the session next.
CREATE TABLE agents_session_waits (
  turn_id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  node TEXT NOT NULL,
  arrived_at BIGINT NOT NULL,
  -- order of arrival within one process and millisecond
  seq BIGINT NOT NULL
);
CREATE INDEX agents_session_waits_session ON agents_session_waits (session_id, arrived_at, seq);
CREATE INDEX agents_session_waits_node ON agents_session_waits (node);
