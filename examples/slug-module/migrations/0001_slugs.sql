CREATE TABLE slug_slugs (
  slug TEXT PRIMARY KEY,
  title TEXT NOT NULL,
  created_at TEXT NOT NULL
);
