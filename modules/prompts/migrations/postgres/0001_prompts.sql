-- PostgreSQL twin of ../0001_prompts.sql (docs/decisions-fleet.md maps the types).
CREATE TABLE prompts_versions (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  version BIGINT NOT NULL,
  content_hash TEXT NOT NULL,
  system_prompt TEXT NOT NULL,
  tools TEXT NOT NULL DEFAULT '[]',
  variables TEXT NOT NULL DEFAULT '[]',
  description TEXT,
  created_at TEXT NOT NULL,
  created_by TEXT NOT NULL,
  is_active BIGINT NOT NULL DEFAULT 0,
  UNIQUE (agent_id, version)
);
-- One active version per agent.
CREATE UNIQUE INDEX prompts_versions_active ON prompts_versions (agent_id) WHERE is_active = 1;

CREATE TABLE prompts_experiments (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  name TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('draft', 'running', 'paused', 'completed')),
  traffic_split TEXT NOT NULL,
  success_criteria TEXT NOT NULL,
  created_at TEXT NOT NULL,
  started_at TEXT,
  ended_at TEXT,
  winner_variant_id TEXT
);
-- At most one experiment samples an agent's turns at a time.
CREATE UNIQUE INDEX prompts_experiments_running ON prompts_experiments (agent_id) WHERE status = 'running';

CREATE TABLE prompts_variants (
  id TEXT PRIMARY KEY,
  experiment_id TEXT NOT NULL,
  position BIGINT NOT NULL,
  name TEXT NOT NULL,
  prompt_version_id TEXT NOT NULL,
  description TEXT,
  impressions BIGINT NOT NULL DEFAULT 0,
  wins BIGINT NOT NULL DEFAULT 0,
  total_cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0,
  total_latency_ms BIGINT NOT NULL DEFAULT 0,
  measured BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX prompts_variants_experiment ON prompts_variants (experiment_id, position);
