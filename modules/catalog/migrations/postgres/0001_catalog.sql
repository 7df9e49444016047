-- PostgreSQL twin of ../0001_catalog.sql (docs/decisions-fleet.md maps the types).
-- Provider keys, encrypted (AES-256-GCM) under the secret key; never plaintext. (0003 moves them to the secrets module.)
CREATE TABLE catalog_provider_keys (
  provider TEXT PRIMARY KEY,
  ciphertext TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

-- PUT /api/providers/{name}/url overrides.
CREATE TABLE catalog_provider_urls (
  provider TEXT PRIMARY KEY,
  base_url TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

-- User aliases; model_id NULL hides a catalogue alias the user deleted.
CREATE TABLE catalog_aliases (
  alias TEXT PRIMARY KEY,
  model_id TEXT,
  updated_at TEXT NOT NULL
);

-- POST /api/models/custom entries (the ModelEntry as JSON).
CREATE TABLE catalog_custom_models (
  id TEXT PRIMARY KEY,
  provider TEXT NOT NULL,
  entry TEXT NOT NULL,
  created_at TEXT NOT NULL
);
