-- Provider keys, sealed (AES-256-GCM) under the secret key with the provider's name as owner; never plaintext.
-- A home made before this module had them in catalog_provider_keys: the catalog's migration 0003 copies them here.
CREATE TABLE secrets_provider_keys (
  provider TEXT PRIMARY KEY,
  ciphertext TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

-- One value sealed with the secret key by the first process that starts: a later start whose key does not open it
-- has the wrong key (another home's, or a second key made by a process that raced the first) and stops.
-- (Before this module: catalog_key_check, copied here by the catalog's migration 0003.)
CREATE TABLE secrets_key_check (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  sealed TEXT NOT NULL,
  created_at TEXT NOT NULL
);
