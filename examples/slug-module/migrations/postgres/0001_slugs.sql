-- PostgreSQL twin of ../0001_slugs.sql (the types map one to one here: TEXT stays TEXT).
CREATE TABLE slug_slugs (
  slug TEXT PRIMARY KEY,
  title TEXT NOT NULL,
  created_at TEXT NOT NULL
);
