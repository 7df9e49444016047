-- The queue of background turns, durable: a turn is a row before it runs, so any process may run it, lane caps hold
-- across processes (a claim counts the lane's running rows), and a killed process loses nothing it had queued.
-- Times are epoch ms.
CREATE TABLE tasks_queue (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  lane TEXT NOT NULL,
  -- 'turn': an agent turn (payload: the turn), any process runs it; 'local': a module's job (a function), only the
  -- module copy holding it (holder) can run it
  kind TEXT NOT NULL CHECK (kind IN ('turn', 'local')),
  -- an idempotency key: a second request with the key waits for this row instead of queueing another
  key TEXT UNIQUE,
  payload TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed', 'cancelled')),
  -- the node that queued it, and (local jobs) the module copy holding the function
  owner TEXT NOT NULL,
  holder TEXT,
  -- the node running it (while running, and after)
  node TEXT,
  attempts INTEGER NOT NULL DEFAULT 0,
  result TEXT,
  error TEXT,
  -- the HTTP status of a failure (the agent's 404, a timeout's 504), so a waiter elsewhere rejects alike
  error_status INTEGER,
  created_at INTEGER NOT NULL,
  started_at INTEGER,
  finished_at INTEGER
);
CREATE INDEX tasks_queue_lane ON tasks_queue (lane, state, seq);
CREATE INDEX tasks_queue_running ON tasks_queue (node) WHERE state = 'running';
CREATE INDEX tasks_queue_finished ON tasks_queue (finished_at);
