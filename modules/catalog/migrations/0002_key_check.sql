-- One value sealed with the secret key by the first process that starts: a later start whose key does not open it
-- has the wrong key (another home's, or a second key made by a process that raced the first) and stops.
CREATE TABLE catalog_key_check (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  sealed TEXT NOT NULL,
  created_at TEXT NOT NULL
);
