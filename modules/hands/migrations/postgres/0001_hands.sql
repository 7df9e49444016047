-- PostgreSQL twin of ../0001_hands.sql (docs/decisions-fleet.md maps the types).
-- Hand instances: what an activation created (agents by role, scheduler jobs, triggers), so a deactivation removes
-- exactly that and a restart finds it again. status: 'Active', 'Paused' or 'Error: <message>'.
CREATE TABLE hands_instances (
  id TEXT PRIMARY KEY,
  hand_id TEXT NOT NULL,
  status TEXT NOT NULL,
  agents TEXT NOT NULL DEFAULT '{}',
  jobs TEXT NOT NULL DEFAULT '[]',
  triggers TEXT NOT NULL DEFAULT '[]',
  degraded BIGINT NOT NULL DEFAULT 0,
  events_processed BIGINT NOT NULL DEFAULT 0,
  errors BIGINT NOT NULL DEFAULT 0,
  last_error TEXT,
  activated_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX hands_instances_hand ON hands_instances (hand_id);

-- The settings a person chose per hand (values of the hand's [[settings]] plus undeclared keys, kept and reported).
CREATE TABLE hands_settings (
  hand_id TEXT PRIMARY KEY,
  settings TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
