-- The hand-over of the secrets to the secrets module (issue 25): a home made before it keeps its stored provider keys
-- and its key check value here. The secrets module is a dependency, so its tables exist already (its migrations run
-- first); this copies the rows over once and drops these tables, so no stale sealed copy of a deleted key stays
-- behind. A row the secrets module already has wins (it was written with the key in use).
-- The values move as they are: a provider key stays sealed under its provider's name, the check value under
-- 'catalog:key-check' (the secrets module opens it under that owner), so the same secret key opens them.
-- ("WHERE true" keeps SQLite from reading ON CONFLICT as part of the SELECT's join.)
INSERT INTO secrets_provider_keys (provider, ciphertext, updated_at)
  SELECT provider, ciphertext, updated_at FROM catalog_provider_keys WHERE true
  ON CONFLICT (provider) DO NOTHING;
INSERT INTO secrets_key_check (id, sealed, created_at)
  SELECT id, sealed, created_at FROM catalog_key_check WHERE true
  ON CONFLICT (id) DO NOTHING;
DROP TABLE catalog_provider_keys;
DROP TABLE catalog_key_check;
