-- PostgreSQL twin of ../0003_keys_to_secrets.sql: the hand-over of the stored provider keys and the key check value to
-- the secrets module (a dependency: its tables exist already), once; a row the secrets module already has wins. On
-- PostgreSQL the catalog's tables are new and empty, so this copies nothing; it keeps both engines' tables the same.
INSERT INTO secrets_provider_keys (provider, ciphertext, updated_at)
  SELECT provider, ciphertext, updated_at FROM catalog_provider_keys
  ON CONFLICT (provider) DO NOTHING;
INSERT INTO secrets_key_check (id, sealed, created_at)
  SELECT id, sealed, created_at FROM catalog_key_check
  ON CONFLICT (id) DO NOTHING;
DROP TABLE catalog_provider_keys;
DROP TABLE catalog_key_check;
